/** Mixed GPUs: fine only if every torch arch list in the fleet covers every GPU in it. */
import { coverageFor, formatComputeCapability, type ComputeCapability } from "../../kb/compat.js";
import { smiCapability, torchCapability } from "../../facts/capability.js";
import {
  fleetFinding,
  nodeListText,
  spread,
  spreadEvidence,
  type FleetWideRule,
  type OkNode,
} from "../rule-kit.js";
import { fieldDrift } from "./field-drift.js";

/** The capabilities in the fleet (nvidia-smi's as it wrote them, torch's as X.Y), with their nodes. */
function capabilities(nodes: readonly OkNode[]): Map<string, { cc: ComputeCapability; nodes: string[] }> {
  const byCapability = new Map<string, { cc: ComputeCapability; nodes: string[] }>();
  for (const n of nodes) {
    const ccs = new Map<string, ComputeCapability>();
    for (const gpu of n.facts.host.nvidia.gpus) {
      const cc = smiCapability(gpu);
      if (cc && gpu.computeCapability && !ccs.has(gpu.computeCapability)) ccs.set(gpu.computeCapability, cc);
    }
    const live = n.facts.python.torchLive.status === "ok" ? n.facts.python.torchLive.result : null;
    for (const d of live?.devices ?? []) {
      const cc = torchCapability(d);
      const text = formatComputeCapability(cc);
      if (!ccs.has(text)) ccs.set(text, cc);
    }
    for (const [text, cc] of ccs) {
      const entry = byCapability.get(text);
      if (entry) entry.nodes.push(n.node);
      else byCapability.set(text, { cc, nodes: [n.node] });
    }
  }
  return byCapability;
}

/** Arch lists of the fleet that have no kernels for a compute capability present in it. */
function uncoveredPairs(nodes: readonly OkNode[]): { sentences: string[]; affected: Set<string> } {
  const sentences: string[] = [];
  const affected = new Set<string>();
  const present = capabilities(nodes);
  for (const [archList, listNodes] of spread(nodes, "torchArchList")) {
    const targets = archList.split(" ").filter((t) => /^(sm|compute)_\d+/.test(t));
    if (targets.length === 0) continue;
    for (const [ccText, { cc, nodes: gpuNodes }] of present) {
      if (coverageFor(targets, cc).how !== "none") continue;
      sentences.push(
        `the torch arch list of ${nodeListText(listNodes, 3)} (${archList}) has no kernels for compute capability ${ccText} (${nodeListText(gpuNodes, 3)})`,
      );
      gpuNodes.forEach((g) => affected.add(g));
    }
  }
  return { sentences, affected };
}

export const gpuMix: FleetWideRule = {
  scope: "fleet",
  id: "fleet-gpu-mix",
  title: "GPU models differ between nodes",
  severity: "info",
  check(view) {
    const drift = fieldDrift(view, "gpus");
    if (!drift) return [];
    const { sentences, affected } = uncoveredPairs(view.nodes);
    const failing = sentences.length > 0;
    const mix =
      drift.values.length > 1
        ? `The fleet mixes GPUs: ${drift.values.map(([v, ns]) => `${v} on ${nodeListText(ns, 3)}`).join("; ")}.`
        : `Every node has ${drift.values[0]?.[0] ?? "?"}, not the baseline's ${drift.expected.text}.`;
    return [
      fleetFinding(this, {
        severity: failing ? "error" : drift.expected.fromBaseline ? "warning" : "info",
        message: `${mix} ${
          failing
            ? `An environment moved between nodes fails with "no kernel image is available": ${sentences.join("; ")}.`
            : "Every torch arch list here covers every GPU's compute capability."
        }`,
        evidence: spreadEvidence("gpus", drift.values, drift.expected.text),
        fix: failing
          ? "Use a torch build whose arch list covers every compute capability in the fleet, or keep separate partitions/images per GPU generation."
          : "No action needed for the software; check the nodes' GPUs against what they should have.",
        nodes: failing ? [...affected] : drift.drifted,
      }),
    ];
  },
};
