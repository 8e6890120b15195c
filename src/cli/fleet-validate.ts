/**
 * `gpuprep fleet validate`: the doctor probe and the validate payload on every node (two steps
 * through the same transport), merged like fleet doctor with each node's failed or warned checks
 * as that node's findings; with --allreduce, one multi-node all-reduce through torchrun under srun.
 */
import { UserError } from "../errors.js";
import { loadKnowledgeBase, type KnowledgeBase } from "../kb/index.js";
import { diagnose } from "../diagnose/diagnose.js";
import type { Facts } from "../facts/schema.js";
import type { Finding } from "../rule-helpers/types.js";
import { gatherFleetFacts } from "../fleet/gather.js";
import { mergeFleet } from "../fleet/merge.js";
import { allreduceFinding, runAllreduce } from "../fleet/allreduce.js";
import { judgePayload } from "../validate/judge.js";
import { severityOf, verdictOfStatus } from "../judge/vocabulary.js";
import {
  ONLY_NAMES,
  payloadArgs,
  payloadFromOutput,
  payloadScript,
  type PayloadOptions,
} from "../validate/payload.js";
import type { ValidateReport } from "../validate/report.js";
import { errorMessage } from "../errors.js";
import { docsUrl } from "../docs-url.js";
import type { OptionTable } from "./command.js";
import { checkedOnlyNames } from "./args.js";
import { newNonce } from "../transports/node-frame.js";

const VALIDATE = "fleet validate";

export const VALIDATE_OPTIONS = {
  quick: { type: "boolean", description: "fewer shapes and sizes (as in validate)", group: VALIDATE },
  only: {
    type: "string",
    value: "LIST",
    description: `comma-separated: ${ONLY_NAMES.join(", ")} (as in validate)`,
    group: VALIDATE,
  },
  allreduce: {
    type: "boolean",
    description: "also one multi-node NCCL all-reduce through torchrun under srun (--slurm)",
    group: VALIDATE,
  },
  "allreduce-port": {
    type: "string",
    value: "PORT",
    description: "the rendezvous port of --allreduce (default: one in 29400-29899)",
    group: VALIDATE,
  },
  "cpu-benchmarks": {
    type: "boolean",
    description: "the payload's test mode: benchmarks at toy sizes on the CPU (nodes without GPUs)",
    group: VALIDATE,
  },
} as const satisfies OptionTable;

// Imported lazily by type only: fleet.ts imports this module.
type FleetModule = typeof import("./fleet.js");

function payloadOptions(values: Record<string, unknown>): PayloadOptions {
  const options: PayloadOptions = { quick: values["quick"] === true };
  if (typeof values["only"] === "string")
    options.only = checkedOnlyNames("fleet validate", values["only"], ONLY_NAMES);
  // Test mode of the payload: benchmarks at toy sizes on the CPU (machines without GPUs).
  if (values["cpu-benchmarks"] === true) options.device = "cpu";
  return options;
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

export async function runFleetValidate(values: Record<string, unknown>, extra: string[]): Promise<number> {
  const fleet: FleetModule = await import("./fleet.js");
  const v = values as Parameters<FleetModule["emitReport"]>[1];
  const kind = v.slurm ? "slurm" : v.kube ? "kube" : null;
  if (!kind || v.from) {
    throw new UserError(
      "fleet validate runs on live nodes: pass --slurm or --kube",
      "replaying saved results is fleet doctor --from",
    );
  }
  const options = fleet.gatherOptions(v);
  const payload = payloadOptions(values);
  const transport = fleet.fleetTransportFor(kind, v, extra);
  const kb = loadKnowledgeBase();
  const results = await gatherFleetFacts(transport, options);
  // The payload has its own per-section limits; the node limit covers them all.
  const validateTimeout = Math.max(options.nodeTimeoutMs, 900_000);
  const nonce = newNonce(); // in the script's frame header, never in argv
  const runs = await transport.runPythonOnNodes(payloadScript(nonce), payloadArgs(payload), validateTimeout);
  const reports = new Map<string, ValidateReport | string>();
  for (const run of runs) {
    if (run.state !== "ran" || !run.result) {
      reports.set(run.node, `${run.state}: ${run.reason ?? ""}`);
      continue;
    }
    try {
      reports.set(
        run.node,
        judgePayload(payloadFromOutput(run.result, `${transport.python} on node ${run.node}`, nonce), kb, {
          transport: kind,
        }),
      );
    } catch (error) {
      reports.set(run.node, errorMessage(error));
    }
  }
  const perNode = (facts: Facts, k: KnowledgeBase): Finding[] => {
    const node = facts.target.ref ?? "";
    const report = reports.get(node);
    const doctor = diagnose(facts, k);
    if (report === undefined) return doctor;
    if (typeof report === "string") {
      return [
        ...doctor,
        {
          ruleId: "fleet-validate-failed",
          severity: "error",
          title: "The validate payload did not run on this node",
          message: report.slice(0, 300),
          evidence: [],
          fix: { summary: "Run `gpuprep validate` on the node by hand to see the full error.", commands: [] },
          docs: docsUrl("docs/fleet.md#fleet-validate-failed"),
        },
      ];
    }
    return [...doctor, ...validationFindings(report)];
  };
  const extraFindings = [];
  if (v.allreduce) {
    if (kind !== "slurm")
      throw new UserError(
        "--allreduce runs through torchrun under srun: it needs --slurm",
        "drop --allreduce for --kube",
      );
    const ok = results.filter((r) => r.status === "ok").map((r) => r.node);
    const port = fleet.positiveInt(
      values["allreduce-port"] as string | undefined,
      "--allreduce-port",
      29400 + Math.floor(Math.random() * 500),
    );
    extraFindings.push(
      allreduceFinding(
        await runAllreduce(fleet.slurmSelection(v, extra), transport.python, ok, port, options.nodeTimeoutMs),
      ),
    );
  }
  const report = mergeFleet(results, kb, {
    transport: transport.describe(),
    mode: "validate",
    diagnose: perNode,
    extraFleetFindings: extraFindings,
  });
  return fleet.emitReport(report, v);
}
