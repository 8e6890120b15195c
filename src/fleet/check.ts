/**
 * `gpuprep fleet check --node --baseline FILE`: this node against the baseline, for a node health
 * checker (LBNL NHC's check_cmd_output, a node-problem-detector custom plugin): the probe here with
 * the passive GPU health counters, the fleet rules with the baseline as reference, one line out and
 * exit 0 (as the baseline), 1 (drift or a problem) or 2 (could not check). The line is what NHC
 * puts in the drain reason and node-problem-detector in the node condition's message.
 */
import { hostname } from "node:os";
import type { KnowledgeBase } from "../kb/index.js";
import type { FleetTransport } from "../transports/fleet-types.js";
import { localTransport } from "../transports/local.js";
import type { Baseline } from "./baseline.js";
import { gatherFleetFacts, type FleetGatherOptions } from "./gather.js";
import { mergeFleet } from "./merge.js";
import type { PackagePolicy } from "./packages.js";
import type { FleetReport, MergedFinding } from "./types.js";

interface NodeCheckOptions {
  python: string;
  gather: FleetGatherOptions;
  baseline: Baseline;
  packages?: PackagePolicy;
}

export interface NodeCheck {
  node: string;
  report: FleetReport;
  /** What makes the node fail the check: drift from the baseline and the node's error findings. */
  problems: MergedFinding[];
  exitCode: 0 | 1;
}

/** This machine as a one-node fleet: the probe run here, named by the host name. */
function thisNode(python: string): FleetTransport {
  const local = localTransport(python);
  const node = hostname();
  return {
    kind: "ssh",
    python,
    describe: () => `this node (${node})`,
    async runPythonOnNodes(script, args, timeoutMs) {
      const result = await local.runPython(script, args, timeoutMs);
      const state = result.timedOut ? "hung" : "ran";
      return [
        {
          node,
          state,
          reason: result.timedOut ? `killed at the ${Math.round(timeoutMs / 1000)}s limit` : null,
          result,
          durationMs: null,
        },
      ];
    },
  };
}

export async function checkNode(options: NodeCheckOptions, kb: KnowledgeBase): Promise<NodeCheck> {
  const transport = thisNode(options.python);
  const results = await gatherFleetFacts(transport, options.gather);
  const report = mergeFleet(results, kb, {
    transport: transport.describe(),
    mode: "doctor",
    baseline: options.baseline,
    ...(options.packages ? { packages: options.packages } : {}),
  });
  // Drift and GPU health at warning or worse, and the node's own errors (a torch that fails to import).
  const problems = [
    ...report.fleetFindings.filter((f) => f.severity !== "info"),
    ...report.nodeFindings.filter(
      (f) => f.severity === "error" || (f.ruleId.startsWith("fleet-gpu-") && f.severity === "warning"),
    ),
  ];
  return { node: results[0]?.node ?? hostname(), report, problems, exitCode: problems.length > 0 ? 1 : 0 };
}
