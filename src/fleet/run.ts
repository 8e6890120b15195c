/**
 * The fleet command's core, callable as a library (`runFleet` from the package's entry): gather
 * every node's facts through one carrier (Slurm, Kubernetes, ssh/pdsh/clush hosts, or saved
 * snapshots), run validate there too where asked, and merge it all into one FleetReport. It prints
 * nothing and exits nothing: the CLI renders the report and sets the exit status from it.
 */
import { UserError } from "../errors.js";
import { loadKnowledgeBase, type KnowledgeBase } from "../kb/index.js";
import type { Rule } from "../findings/types.js";
import { RULES } from "../rules/registry.js";
import type { FleetTransport, NodeRun } from "../transports/fleet-types.js";
import { slurmTransport, execSlurm, type SlurmSelection } from "../transports/slurm.js";
import { collectBatch } from "../transports/slurm-batch.js";
import { kubeTransport, type KubeSelection } from "../transports/kube.js";
import { hostsTransport, type HostsSelection } from "../transports/hosts.js";
import type { Baseline } from "./baseline.js";
import { gatherFleetFacts, nodeResultFromRun, type FleetGatherOptions } from "./gather.js";
import { mergeFleet, type MergeOptions } from "./merge.js";
import type { PackagePolicy } from "./packages.js";
import { readSnapshots } from "./snapshots.js";
import type { FleetReport, NodeResult } from "./types.js";
import { runFleetValidate, type FleetValidateOptions } from "./validate.js";

export type FleetCarrier =
  | { kind: "slurm"; selection: SlurmSelection; python: string }
  | { kind: "kube"; selection: KubeSelection; python: string }
  | { kind: "hosts"; selection: HostsSelection; python: string }
  | { kind: "snapshots"; paths: string[] };

export interface FleetRunOptions {
  mode: FleetReport["mode"];
  carrier: FleetCarrier;
  /** How every node's probe runs (limits, --fast, import checks, the project). */
  gather: FleetGatherOptions;
  baseline?: Baseline;
  packages?: PackagePolicy;
  /** fleet validate: the payload's options and --allreduce. */
  validate?: FleetValidateOptions;
}

export interface FleetRun {
  report: FleetReport;
  /** Every node's result, facts included (what --save writes). */
  results: NodeResult[];
}

/** fleet scan: the per-node rules about which GPU code the environment can run. */
const SCAN_RULE_IDS = new Set([
  "torch-arch-not-covered",
  "torch-binary-arch-missing",
  "extension-arch-missing",
  "ptx-only-coverage",
  "torch-kernel-launch-failed",
]);

function fleetTransportFor(carrier: Exclude<FleetCarrier, { kind: "snapshots" }>): FleetTransport {
  switch (carrier.kind) {
    case "slurm":
      return slurmTransport({ selection: carrier.selection, python: carrier.python });
    case "kube":
      return kubeTransport({ selection: carrier.selection, python: carrier.python });
    case "hosts":
      return hostsTransport({ selection: carrier.selection, python: carrier.python });
  }
}

function mergeOptions(options: FleetRunOptions, transport: string): MergeOptions {
  const rules: readonly Rule[] | undefined =
    options.mode === "scan" ? RULES.filter((r) => SCAN_RULE_IDS.has(r.id)) : undefined;
  return {
    transport,
    mode: options.mode,
    ...(rules ? { rules } : {}),
    ...(options.baseline ? { baseline: options.baseline } : {}),
    ...(options.packages ? { packages: options.packages } : {}),
  };
}

export async function runFleet(
  options: FleetRunOptions,
  kb: KnowledgeBase = loadKnowledgeBase(),
): Promise<FleetRun> {
  const { carrier } = options;
  if (carrier.kind === "snapshots") {
    if (options.mode === "validate")
      throw new UserError(
        "fleet validate runs on live nodes: pass --slurm, --kube or --hosts",
        "replaying saved results is fleet doctor --from",
      );
    const results = readSnapshots(carrier.paths);
    return { results, report: mergeFleet(results, kb, mergeOptions(options, "snapshots")) };
  }
  const transport = fleetTransportFor(carrier);
  if (options.mode === "validate") {
    const run = await runFleetValidate(
      transport,
      options.gather,
      options.validate ?? { payload: { quick: false } },
      kb,
    );
    const report = mergeFleet(run.results, kb, {
      ...mergeOptions(options, transport.describe()),
      validateFindings: run.validateFindings,
      validateFailures: run.validateFailures,
      ...(run.allreduce ? { allreduce: run.allreduce } : {}),
    });
    return { results: run.results, report };
  }
  const results = await gatherFleetFacts(transport, options.gather);
  return { results, report: mergeFleet(results, kb, mergeOptions(options, transport.describe())) };
}

/** `fleet collect JOBID`: a job sent with --submit, read back from its output file. */
export async function collectFleetJob(
  jobDir: string,
  jobId: string,
  options: Omit<FleetRunOptions, "carrier" | "mode"> & { dropUnavailable?: boolean },
  kb: KnowledgeBase = loadKnowledgeBase(),
): Promise<FleetRun> {
  const { job, runs } = await collectBatch(execSlurm, jobDir, jobId, options.dropUnavailable).catch(
    async (error: unknown) => {
      // No Slurm here (collecting on another machine): the output file alone decides.
      if (error instanceof UserError && /not on PATH/.test(error.message))
        return collectBatch(null, jobDir, jobId);
      throw error;
    },
  );
  const fleet: FleetTransport = {
    kind: "slurm",
    python: job.python,
    describe: () => `Slurm job ${job.jobId}`,
    runPythonOnNodes: () => Promise.reject(new Error("not used")),
  };
  const gather = {
    ...options.gather,
    nodeTimeoutMs: job.nodeTimeoutSeconds * 1000,
    // A job from a gpuprep without framed probe results matches nothing: resubmit it.
    probeNonce: job.probeNonce ?? "",
  };
  const capturedAt = new Date().toISOString();
  const results = runs.map((run: NodeRun) => nodeResultFromRun(fleet, run, gather, capturedAt));
  const mode = job.mode === "scan" ? "scan" : "doctor";
  return {
    results,
    report: mergeFleet(
      results,
      kb,
      mergeOptions({ ...options, mode, carrier: { kind: "snapshots", paths: [] } }, fleet.describe()),
    ),
  };
}
