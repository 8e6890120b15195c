/**
 * `gpuprep fleet validate`: the doctor probe and the validate payload on every node (two steps
 * through the same carrier), each node's failed or warned checks becoming that node's findings;
 * with --allreduce, one multi-node all-reduce through torchrun under srun over the nodes whose torch
 * imports. The CLI only parses its options and renders what this returns.
 */
import { UserError, errorMessage } from "../errors.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Finding } from "../findings/types.js";
import { docsUrl } from "../docs-url.js";
import { judgePayload } from "../validate/judge.js";
import { severityOf, verdictOfStatus } from "../judge/vocabulary.js";
import { payloadArgs, payloadFromOutput, payloadScript, type PayloadOptions } from "../validate/payload.js";
import { newNonce } from "../transports/node-frame.js";
import type { ValidateReport } from "../validate/report.js";
import type { FleetTransport } from "../transports/fleet-types.js";
import type { SlurmSelection } from "../transports/slurm.js";
import { gatherFleetFacts, type FleetGatherOptions } from "./gather.js";
import { allreduceExclusion, runAllreduce, type AllreduceOutcome } from "./allreduce.js";
import type { NodeResult } from "./types.js";

export interface FleetValidateOptions {
  payload: PayloadOptions;
  /** --allreduce (Slurm only): the selection to run it in and the rendezvous port. */
  allreduce?: { selection: SlurmSelection; port: number };
}

interface FleetValidateRun {
  results: NodeResult[];
  validateFindings: Map<string, Finding[]>;
  validateFailures: Map<string, string>;
  allreduce?: AllreduceOutcome;
}

/**
 * A node's failed and warned checks as findings, in doctor's words through the one verdict table
 * (src/judge/vocabulary.ts); passes, skips and infos are not findings. A check doctor's rules
 * judge too (src/judge/) keeps that rule's id and page, so the same cause has one name in both.
 */
export function validationFindings(report: ValidateReport): Finding[] {
  return report.items.flatMap((item) => {
    const severity = severityOf(verdictOfStatus(item.status));
    if (severity === null || severity === "info") return [];
    return [
      {
        ruleId: item.ruleId ?? `validate/${item.id}`,
        severity,
        title: item.title,
        message: item.reason,
        evidence: item.measured
          ? [{ label: "measured", value: `${item.measured.value} ${item.measured.unit}` }]
          : [],
        fix: { summary: "See `gpuprep validate` on that node for the full report.", commands: [] },
        docs: item.docs ?? docsUrl("docs/validate.md"),
      },
    ];
  });
}

/** The payload on every node, each answer judged (a failure to run is that node's text). */
async function validateNodes(
  transport: FleetTransport,
  options: FleetValidateOptions,
  nodeTimeoutMs: number,
  kb: KnowledgeBase,
): Promise<Map<string, ValidateReport | string>> {
  // The payload has its own per-section limits; the node limit covers them all.
  const timeout = Math.max(nodeTimeoutMs, 900_000);
  const nonce = newNonce(); // in the script's frame header, never in argv
  const runs = await transport.runPythonOnNodes(payloadScript(nonce), payloadArgs(options.payload), timeout);
  const reports = new Map<string, ValidateReport | string>();
  for (const run of runs) {
    if (run.state !== "ran" || !run.result) {
      reports.set(run.node, `${run.state}: ${run.reason ?? ""}`);
      continue;
    }
    try {
      const payload = payloadFromOutput(run.result, `${transport.python} on node ${run.node}`, nonce);
      reports.set(
        run.node,
        judgePayload(payload, kb, { transport: transport.kind === "ssh" ? "ssh" : transport.kind }),
      );
    } catch (error) {
      reports.set(run.node, errorMessage(error));
    }
  }
  return reports;
}

/** --allreduce over the nodes whose torch imports; the others are named, not blamed on the network. */
async function allreduceOutcome(
  results: readonly NodeResult[],
  python: string,
  allreduce: NonNullable<FleetValidateOptions["allreduce"]>,
  nodeTimeoutMs: number,
): Promise<AllreduceOutcome> {
  const leftOut: AllreduceOutcome["leftOut"] = [];
  const eligible: string[] = [];
  for (const r of results) {
    const why = allreduceExclusion(r);
    if (why === null) eligible.push(r.node);
    else leftOut.push({ node: r.node, why });
  }
  if (eligible.length < 2) return { leftOut, result: null };
  return {
    leftOut,
    result: await runAllreduce(allreduce.selection, python, eligible, allreduce.port, nodeTimeoutMs),
  };
}

export async function runFleetValidate(
  transport: FleetTransport,
  gather: FleetGatherOptions,
  options: FleetValidateOptions,
  kb: KnowledgeBase,
): Promise<FleetValidateRun> {
  if (options.allreduce && transport.kind !== "slurm")
    throw new UserError(
      "--allreduce runs through torchrun under srun: it needs --slurm",
      "drop --allreduce for --kube or --hosts",
    );
  const results = await gatherFleetFacts(transport, gather);
  const reports = await validateNodes(transport, options, gather.nodeTimeoutMs, kb);
  const validateFindings = new Map<string, Finding[]>();
  const validateFailures = new Map<string, string>();
  for (const [node, report] of reports) {
    if (typeof report === "string") validateFailures.set(node, report);
    else validateFindings.set(node, validationFindings(report));
  }
  const run: FleetValidateRun = { results, validateFindings, validateFailures };
  if (options.allreduce)
    run.allreduce = await allreduceOutcome(
      results,
      transport.python,
      options.allreduce,
      gather.nodeTimeoutMs,
    );
  return run;
}
