/**
 * `gpuprep fleet doctor|scan|validate|collect`: the same checks on many nodes (Slurm, Kubernetes,
 * or saved snapshots), merged into one report: groups of identical nodes, drift between them,
 * nodes that did not answer, and every node's findings once with the nodes they fired on.
 */
import { writeDocument, writeText } from "../report/terminal.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { checkedModuleNames } from "./args.js";
import { EXIT_OK, defineCommand, type OptionTable, type Parsed, type ValuesOf } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { writeOutputFile } from "../util/write-output.js";
import { writeFactsFile } from "../facts/io.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { hasProjectManifest, readProject } from "../gather/project.js";
import { gatherFleetFacts, nodeResultFromRun, probeArgs, type FleetGatherOptions } from "../fleet/gather.js";
import { readSnapshots } from "../fleet/snapshots.js";
import { probeSource } from "../gather/probe.js";
import { mergeFleet } from "../fleet/merge.js";
import { RULES } from "../rules/registry.js";
import type { FleetReport, NodeResult } from "../fleet/types.js";
import { checkSelection, execSlurm, slurmTransport, type SlurmSelection } from "../transports/slurm.js";
import { collectBatch, JOB_META_SCHEMA, submitBatch } from "../transports/slurm-batch.js";
import { newNonce } from "../transports/node-frame.js";
import type { FleetTransport } from "../transports/fleet-types.js";
import { renderJsonDocument } from "../report/envelope.js";
import { FLEET_JOB_SCHEMA_VERSION, FLEET_SCHEMA, FLEET_SCHEMA_VERSION } from "../report/document-ids.js";
import { renderFleetText, renderSubmittedJob } from "../report/fleet-text.js";
import { toFleetHtmlReport } from "../report/fleet-html.js";
import { fleetJUnitSuites } from "../report/fleet-junit.js";
import { renderHtmlReport } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import { kubeTransport, type KubeSelection } from "../transports/kube.js";
import { runFleetValidate, VALIDATE_OPTIONS } from "./fleet-validate.js";

const SLURM = "Slurm (runs the probe once per node: srun --ntasks-per-node=1)";
const KUBE = "Kubernetes (one Job per GPU node, results from the pod logs)";
const REPLAY = "Replay";
const COMMON = "Common";

export const FLEET_OPTIONS = {
  slurm: {
    type: "boolean",
    description: "inside an allocation: its nodes; outside: a new job (srun --immediate)",
    group: SLURM,
  },
  partition: { type: "string", short: "p", value: "P", description: "srun --partition", group: SLURM },
  nodes: { type: "string", short: "N", value: "N", description: "srun --nodes", group: SLURM },
  nodelist: { type: "string", short: "w", value: "LIST", description: "srun --nodelist", group: SLURM },
  account: { type: "string", short: "A", value: "A", description: "srun --account", group: SLURM },
  time: { type: "string", short: "t", value: "T", description: "srun --time", group: SLURM },
  "container-image": {
    type: "string",
    value: "IMG",
    description: "run inside this image through pyxis/enroot",
    group: SLURM,
  },
  "container-mounts": {
    type: "string",
    value: "M",
    description: "pyxis' --container-mounts for --container-image",
    group: SLURM,
  },
  "srun-arg": {
    type: "string",
    multiple: true,
    value: "ARG",
    description:
      "one more srun argument, e.g. --srun-arg=--gres=gpu:1 (repeatable;\narguments after -- are passed to srun too)",
    group: SLURM,
  },
  wait: {
    type: "string",
    value: "SECONDS",
    description: "how long srun may wait for free nodes outside an allocation (60)",
    group: SLURM,
  },
  submit: {
    type: "boolean",
    description: "queued clusters: write and sbatch a job instead, then later\n`gpuprep fleet collect JOBID`",
    group: SLURM,
  },
  "job-dir": {
    type: "string",
    value: "DIR",
    description: "where --submit writes the job (default ./gpuprep-fleet-jobs)",
    group: SLURM,
  },
  kube: {
    type: "boolean",
    description: "the API server and credentials of the current kubeconfig context",
    group: KUBE,
  },
  kubeconfig: { type: "string", value: "FILE", description: "another kubeconfig", group: KUBE },
  context: { type: "string", value: "NAME", description: "another context of it", group: KUBE },
  namespace: { type: "string", value: "NS", description: "the namespace (default: default)", group: KUBE },
  image: {
    type: "string",
    value: "IMG",
    description: "the image with your Python environment (required)",
    group: KUBE,
  },
  selector: {
    type: "string",
    value: "SEL",
    description:
      "node label selector (default: nodes with nvidia.com/gpu capacity or\nGPU Feature Discovery's nvidia.com/gpu.* labels)",
    group: KUBE,
  },
  "dry-run": { type: "boolean", description: "print the Job manifests (YAML) and run nothing", group: KUBE },
  from: {
    type: "string",
    multiple: true,
    value: "DIR|FILE...",
    description: "merge snapshots saved with `gpuprep doctor --save` (or fleet --save)",
    group: REPLAY,
  },
  python: {
    type: "string",
    value: "PY",
    description: "the interpreter on the nodes (default python3)",
    group: COMMON,
  },
  "node-timeout": {
    type: "string",
    value: "SECONDS",
    description: "per-node limit; a node over it is reported hung (default 180)",
    group: COMMON,
  },
  fast: { type: "boolean", description: "as in doctor", group: COMMON },
  "import-check": {
    type: "string",
    multiple: true,
    value: "MOD",
    description: "as in doctor",
    group: COMMON,
  },
  project: { type: "string", value: "DIR", description: "as in doctor", group: COMMON },
  save: {
    type: "string",
    value: "DIR",
    description: "write each node's facts snapshot to DIR/NODE.json (for --from)",
    group: COMMON,
  },
  json: { type: "boolean", description: "the merged report (schema gpuprep.fleet)", group: COMMON },
  html: {
    type: "string",
    value: "FILE",
    description: "self-contained HTML with a node x check matrix",
    group: COMMON,
  },
  junit: { type: "string", value: "FILE", description: "JUnit XML, one testcase per node", group: COMMON },
  ...VALIDATE_OPTIONS,
} as const satisfies OptionTable;

type Values = ValuesOf<typeof FLEET_OPTIONS>;
type Tokens = Parsed<typeof FLEET_OPTIONS>["tokens"];

export function positiveInt(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new UserError(`fleet: ${flag} takes a whole number >= 1, not "${text}"`, `e.g. ${flag} 120`);
  }
  return Number(text);
}

export function slurmSelection(values: Values, extra: string[]): SlurmSelection {
  const selection: SlurmSelection = { extraSrunArgs: [...(values["srun-arg"] ?? []), ...extra] };
  if (values.partition) selection.partition = values.partition;
  if (values.nodes !== undefined) selection.nodes = positiveInt(values.nodes, "--nodes", 1);
  if (values.nodelist) selection.nodelist = values.nodelist;
  if (values.account) selection.account = values.account;
  if (values.time) selection.time = values.time;
  if (values["container-image"]) selection.containerImage = values["container-image"];
  if (values["container-mounts"]) selection.containerMounts = values["container-mounts"];
  selection.allocationWaitSeconds = positiveInt(values.wait, "--wait", 60);
  checkSelection(selection);
  return selection;
}

function kubeSelection(values: Values): KubeSelection {
  if (!values.image && !values["dry-run"]) {
    throw new UserError(
      "fleet --kube needs --image: the image with the Python environment to check",
      "e.g. --image nvcr.io/nvidia/pytorch:25.10-py3",
    );
  }
  return {
    image: values.image ?? "IMAGE",
    namespace: values.namespace ?? "default",
    ...(values.selector ? { selector: values.selector } : {}),
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  };
}

/**
 * The subcommand is the first argument; arguments after `--` go to srun; other positionals are
 * --from paths (fleet collect: the job id).
 */
function splitPositionals(tokens: Tokens): { sub: string | undefined; paths: string[]; extra: string[] } {
  const paths: string[] = [];
  const extra: string[] = [];
  let afterTerminator = false;
  let sub: string | undefined;
  for (const token of tokens) {
    if (token.kind === "option-terminator") afterTerminator = true;
    else if (token.kind !== "positional") continue;
    else if (token.index === 0) sub = token.value;
    else (afterTerminator ? extra : paths).push(token.value);
  }
  return { sub, paths, extra };
}

function pickTransport(values: Values, sub: string): "slurm" | "kube" | "from" {
  const chosen = (["slurm", "kube", "from"] as const).filter(
    (k) => values[k] !== undefined && values[k] !== false,
  );
  if (chosen.length !== 1) {
    throw new UserError(
      chosen.length === 0
        ? `fleet ${sub}: say where the nodes are`
        : `fleet ${sub}: --${chosen[0]} and --${chosen[1]} exclude each other`,
      "pass one of --slurm, --kube or --from DIR",
    );
  }
  return chosen[0] as "slurm" | "kube" | "from";
}

export function gatherOptions(values: Values): FleetGatherOptions {
  const projectDir = values.project ?? (hasProjectManifest(process.cwd()) ? process.cwd() : null);
  return {
    fast: values.fast ?? false,
    importChecks: checkedModuleNames("fleet", values["import-check"] ?? []),
    nodeTimeoutMs: positiveInt(values["node-timeout"], "--node-timeout", 180) * 1000,
    probeNonce: newNonce(),
    project: projectDir === null ? null : readProject(projectDir),
  };
}

export function fleetTransportFor(kind: "slurm" | "kube", values: Values, extra: string[]): FleetTransport {
  const python = values.python ?? "python3";
  return kind === "slurm"
    ? slurmTransport({ selection: slurmSelection(values, extra), python })
    : kubeTransport({ selection: kubeSelection(values), python });
}

/** Writes every node's snapshot to DIR/NODE.json, so the same report can be rebuilt with --from. */
function saveSnapshots(dir: string, results: NodeResult[]): void {
  mkdirSync(dir, { recursive: true });
  for (const r of results) {
    if (r.facts) writeFactsFile(join(dir, `${r.node.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`), r.facts);
  }
}

export function emitReport(report: FleetReport, values: Values): number {
  if (values.html) writeOutputFile(values.html, renderHtmlReport(toFleetHtmlReport(report)), "--html");
  if (values.junit)
    writeOutputFile(
      values.junit,
      renderJUnit(fleetJUnitSuites(report), `gpuprep fleet ${report.mode}`),
      "--junit",
    );
  if (values.json) writeDocument(renderJsonDocument(FLEET_SCHEMA, FLEET_SCHEMA_VERSION, report));
  else writeText(renderFleetText(report, makeStyle(useColor())));
  return report.summary.exitCode;
}

async function runDoctor(sub: "doctor" | "scan", values: Values, paths: string[], extra: string[]) {
  const kind = pickTransport(values, sub);
  const kb = loadKnowledgeBase();
  let results: NodeResult[];
  let transportName: string;
  if (kind === "from") {
    results = readSnapshots([...(values.from ?? []), ...paths]);
    transportName = "snapshots";
  } else {
    if (paths.length > 0)
      throw new UserError(`fleet ${sub}: unexpected argument "${paths[0]}"`, "srun arguments go after --");
    const options = gatherOptions(values);
    if (kind === "kube" && values["dry-run"]) {
      const { printKubeManifests } = await import("../transports/kube.js");
      writeDocument(
        await printKubeManifests(
          kubeSelection(values),
          values.python ?? "python3",
          probeSource(options.probeNonce),
          probeArgs(options),
          options.nodeTimeoutMs,
        ),
      );
      return EXIT_OK;
    }
    if (values.submit) {
      if (kind !== "slurm") throw new UserError("--submit is for Slurm", "drop --submit, or use --slurm");
      const job = await submitBatch({
        exec: execSlurm,
        env: process.env,
        selection: slurmSelection(values, extra),
        python: values.python ?? "python3",
        script: probeSource(options.probeNonce),
        args: probeArgs(options),
        probeNonce: options.probeNonce,
        nodeTimeoutMs: options.nodeTimeoutMs,
        jobDir: values["job-dir"] ?? "gpuprep-fleet-jobs",
        mode: sub,
      });
      if (values.json) writeDocument(renderJsonDocument(JOB_META_SCHEMA, FLEET_JOB_SCHEMA_VERSION, job));
      else writeText(renderSubmittedJob(job, values["job-dir"]));
      return EXIT_OK;
    }
    const transport = fleetTransportFor(kind, values, extra);
    results = await gatherFleetFacts(transport, options);
    transportName = transport.describe();
  }
  if (values.save) saveSnapshots(values.save, results);
  const rules = sub === "scan" ? RULES.filter((r) => SCAN_RULES.has(r.id)) : undefined;
  return emitReport(
    mergeFleet(results, kb, { transport: transportName, mode: sub, ...(rules ? { rules } : {}) }),
    values,
  );
}

/** fleet scan: the per-node rules about which GPU code the environment can run. */
const SCAN_RULES = new Set([
  "torch-arch-not-covered",
  "torch-binary-arch-missing",
  "extension-arch-missing",
  "ptx-only-coverage",
  "torch-kernel-launch-failed",
]);

async function runCollect(values: Values, paths: string[]): Promise<number> {
  const jobId = paths[0];
  if (!jobId || paths.length > 1)
    throw new UserError("fleet collect takes one JOBID", "gpuprep fleet collect 123456 [--job-dir DIR]");
  const { job, runs } = await collectBatch(execSlurm, values["job-dir"] ?? "gpuprep-fleet-jobs", jobId).catch(
    async (error: unknown) => {
      // No Slurm here (collecting on another machine): the output file alone decides.
      if (error instanceof UserError && /not on PATH/.test(error.message))
        return collectBatch(null, values["job-dir"] ?? "gpuprep-fleet-jobs", jobId);
      throw error;
    },
  );
  const fleet: FleetTransport = {
    kind: "slurm",
    python: job.python,
    describe: () => `Slurm job ${job.jobId}`,
    runPythonOnNodes: () => Promise.reject(new Error("not used")),
  };
  const options = {
    ...gatherOptions(values),
    nodeTimeoutMs: job.nodeTimeoutSeconds * 1000,
    // A job from a gpuprep without framed probe results matches nothing: resubmit it.
    probeNonce: job.probeNonce ?? "",
  };
  const capturedAt = new Date().toISOString();
  const results = runs.map((run) => nodeResultFromRun(fleet, run, options, capturedAt));
  if (values.save) saveSnapshots(values.save, results);
  const mode = job.mode === "scan" ? "scan" : "doctor";
  return emitReport(mergeFleet(results, loadKnowledgeBase(), { transport: fleet.describe(), mode }), values);
}

const SUBCOMMANDS = ["doctor", "scan", "validate", "collect"] as const;

export const fleetCommand = defineCommand({
  name: "fleet",
  title: "doctor / validate on many nodes, one merged report",
  subcommands: SUBCOMMANDS,
  positionals: "SUBCOMMAND [PATH...]",
  usage: [
    ["doctor   --slurm [slurm flags] | --kube [kube flags] | --from DIR|FILE..."],
    [
      "scan",
      "the same nodes, per-node rules limited to GPU architecture coverage\n(torch arch list, extension and binary targets vs each node's GPU)",
    ],
    ["validate --slurm [--allreduce] [validate flags]"],
    ["collect  JOBID [--job-dir DIR]", "results of a job sent with --submit"],
  ],
  options: FLEET_OPTIONS,
  outputs: ["html", "junit"],
  outputDirs: ["save", "job-dir"],
  outro: `exit status: 0 no errors, 1 errors found (drift, a node's finding, a node not checked), 2 gpuprep
itself could not run`,
  examples: [
    ["salloc -N 16 -p gpu && gpuprep fleet doctor --slurm", "every node of a Slurm allocation"],
    [
      "gpuprep fleet doctor --slurm -p gpu --nodes 16 --container-image nvcr.io#nvidia/pytorch:25.10-py3",
      "16 nodes, inside an image",
    ],
    [
      "gpuprep fleet doctor --kube --image ghcr.io/me/train:1 --html fleet.html",
      "every GPU node of a Kubernetes cluster",
    ],
    ["gpuprep fleet doctor --from snapshots/ --junit fleet.xml", "snapshots saved with --save, merged again"],
  ],
  async run({ values, tokens }) {
    const { sub, paths, extra } = splitPositionals(tokens);
    if (sub === "doctor" || sub === "scan") return runDoctor(sub, values, paths, extra);
    if (sub === "collect") return runCollect(values, paths);
    if (sub === "validate") {
      if (paths.length > 0)
        throw new UserError(
          `fleet validate: unexpected argument "${paths[0]}"`,
          "srun arguments go after --",
        );
      return runFleetValidate(values, extra);
    }
    throw new UserError(
      sub === undefined
        ? "fleet: which check? doctor, scan, validate or collect"
        : `unknown fleet subcommand '${sub}'`,
      `subcommands: ${SUBCOMMANDS.join(", ")} (\`gpuprep help fleet\`)`,
    );
  },
});
