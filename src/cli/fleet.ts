/**
 * `gpuprep fleet doctor|scan|validate|collect`: the same checks on many nodes (Slurm, Kubernetes,
 * or saved snapshots), merged into one report: groups of identical nodes, drift between them,
 * nodes that did not answer, and every node's findings once with the nodes they fired on.
 */
import { writeDocument, writeText } from "../report/terminal.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { checkedModuleNames, checkedOnlyNames } from "./args.js";
import { EXIT_OK, defineCommand, type OptionTable, type Parsed, type ValuesOf } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { writeOutputFile } from "../util/write-output.js";
import { writeFactsFile } from "../facts/io.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { hasProjectManifest, readProject } from "../gather/project.js";
import { probeArgs, type FleetGatherOptions } from "../fleet/gather.js";
import { probeSource } from "../gather/probe.js";
import { collectFleetJob, runFleet, type FleetCarrier, type FleetRunOptions } from "../fleet/run.js";
import type { FleetValidateOptions } from "../fleet/validate.js";
import { checkNode } from "../fleet/check.js";
import { readBaseline } from "../fleet/baseline.js";
import { packagePolicy } from "../fleet/packages.js";
import { expandHostlist } from "../fleet/hostlist.js";
import type { FleetReport, NodeResult } from "../fleet/types.js";
import { checkSelection, execSlurm, type SlurmSelection } from "../transports/slurm.js";
import { JOB_META_SCHEMA, submitBatch } from "../transports/slurm-batch.js";
import { newNonce } from "../transports/node-frame.js";
import { printKubeManifests, type KubeSelection } from "../transports/kube.js";
import type { HostsSelection } from "../transports/hosts.js";
import { ONLY_NAMES, payloadArgs, payloadScript, type PayloadOptions } from "../validate/payload.js";
import { renderJsonDocument } from "../report/envelope.js";
import { FLEET_JOB_SCHEMA_VERSION, FLEET_SCHEMA, FLEET_SCHEMA_VERSION } from "../report/document-ids.js";
import { renderFleetText, renderNodeCheckLine, renderSubmittedJob } from "../report/fleet-text.js";
import { toFleetHtmlReport } from "../report/fleet-html.js";
import { fleetJUnitSuites } from "../report/fleet-junit.js";
import { renderHtmlReport } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";

const SLURM = "Slurm (runs the probe once per node: srun --ntasks-per-node=1)";
const KUBE = "Kubernetes (one Job per GPU node, results from the pod logs)";
const HOSTS = "Hosts without a scheduler (ssh, pdsh or clush)";
const REPLAY = "Replay";
const JUDGE = "What the nodes are judged against";
const COMMON = "Common";
const VALIDATE = "fleet validate";
const CHECK = "fleet check (one node, for NHC or node-problem-detector)";

const FLEET_OPTIONS = {
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
  "dry-run": {
    type: "boolean",
    description: "print the Job manifests (YAML) and run nothing; no kubeconfig needed",
    group: KUBE,
  },
  hosts: {
    type: "string",
    value: "LIST",
    description: "a hostlist: gpu[01-16],login1 (each host must take ssh without a prompt)",
    group: HOSTS,
  },
  launcher: {
    type: "string",
    value: "auto|ssh|pdsh|clush",
    description: "how to reach them (auto: pdsh, else clush, else ssh)",
    group: HOSTS,
  },
  fanout: { type: "string", value: "N", description: "most connections at once (32)", group: HOSTS },
  "ssh-config": { type: "string", value: "FILE", description: "an ssh client config (ssh -F)", group: HOSTS },
  from: {
    type: "string",
    multiple: true,
    value: "DIR|FILE...",
    description: "merge snapshots saved with `gpuprep doctor --save` (or fleet --save)",
    group: REPLAY,
  },
  baseline: {
    type: "string",
    value: "FILE",
    description:
      "judge every node against this: a known-good node's snapshot, or a YAML\nfile of expected values (torch, torchCuda, driver, gpu, gpuCount, python,\npackages); default: the majority",
    group: JUDGE,
  },
  "ignore-package": {
    type: "string",
    multiple: true,
    value: "NAME",
    description: "leave this package out of the package comparison (repeatable; 'nvidia-*')",
    group: JUDGE,
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
  "drop-unavailable": {
    type: "boolean",
    description:
      "fleet collect: take nodes that went down while the job waited out of it,\nso it runs on the others (scontrol update)",
    group: SLURM,
  },
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
  node: {
    type: "boolean",
    description: "check this node against --baseline: one line, exit 0 same, 1 drift, 2 could not check",
    group: CHECK,
  },
} as const satisfies OptionTable;

type Values = ValuesOf<typeof FLEET_OPTIONS>;
type Tokens = Parsed<typeof FLEET_OPTIONS>["tokens"];

function positiveInt(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new UserError(`fleet: ${flag} takes a whole number >= 1, not "${text}"`, `e.g. ${flag} 120`);
  }
  return Number(text);
}

function slurmSelection(values: Values, extra: string[]): SlurmSelection {
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

const LAUNCHERS = ["auto", "ssh", "pdsh", "clush"] as const;

function hostsSelection(values: Values): HostsSelection {
  const launcher = values.launcher ?? "auto";
  if (!(LAUNCHERS as readonly string[]).includes(launcher))
    throw new UserError(
      `fleet: --launcher ${JSON.stringify(launcher)} is not one of ${LAUNCHERS.join(", ")}`,
      "e.g. --launcher pdsh",
    );
  return {
    hosts: expandHostlist(values.hosts ?? "", "--hosts"),
    launcher: launcher as HostsSelection["launcher"],
    fanout: positiveInt(values.fanout, "--fanout", 32),
    ...(values["ssh-config"] ? { sshConfig: values["ssh-config"] } : {}),
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

type Where = "slurm" | "kube" | "hosts" | "from";

function pickTransport(values: Values, sub: string): Where {
  const chosen = (["slurm", "kube", "hosts", "from"] as const).filter(
    (k) => values[k] !== undefined && values[k] !== false,
  );
  if (chosen.length !== 1) {
    throw new UserError(
      chosen.length === 0
        ? `fleet ${sub}: say where the nodes are`
        : `fleet ${sub}: --${chosen[0]} and --${chosen[1]} exclude each other`,
      "pass one of --slurm, --kube, --hosts LIST or --from DIR",
    );
  }
  return chosen[0] as Where;
}

function gatherOptions(values: Values): FleetGatherOptions {
  const projectDir = values.project ?? (hasProjectManifest(process.cwd()) ? process.cwd() : null);
  return {
    fast: values.fast ?? false,
    importChecks: checkedModuleNames("fleet", values["import-check"] ?? []),
    nodeTimeoutMs: positiveInt(values["node-timeout"], "--node-timeout", 180) * 1000,
    probeNonce: newNonce(),
    project: projectDir === null ? null : readProject(projectDir),
  };
}

function carrierFor(where: Where, values: Values, paths: string[], extra: string[]): FleetCarrier {
  const python = values.python ?? "python3";
  if (where === "from") return { kind: "snapshots", paths: [...(values.from ?? []), ...paths] };
  if (paths.length > 0)
    throw new UserError(`fleet: unexpected argument "${paths[0]}"`, "srun arguments go after --");
  if (where === "slurm") return { kind: "slurm", selection: slurmSelection(values, extra), python };
  if (where === "kube") return { kind: "kube", selection: kubeSelection(values), python };
  return { kind: "hosts", selection: hostsSelection(values), python };
}

/** Writes every node's snapshot to DIR/NODE.json, so the same report can be rebuilt with --from. */
function saveSnapshots(dir: string, results: NodeResult[]): void {
  mkdirSync(dir, { recursive: true });
  for (const r of results) {
    if (r.facts) writeFactsFile(join(dir, `${r.node.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`), r.facts);
  }
}

function emitReport(report: FleetReport, values: Values): number {
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

function payloadOptions(values: Values): PayloadOptions {
  const options: PayloadOptions = { quick: values.quick === true };
  if (values.only !== undefined) options.only = checkedOnlyNames("fleet validate", values.only, ONLY_NAMES);
  // Test mode of the payload: benchmarks at toy sizes on the CPU (machines without GPUs).
  if (values["cpu-benchmarks"] === true) options.device = "cpu";
  return options;
}

function validateOptions(values: Values, carrier: FleetCarrier): FleetValidateOptions {
  const options: FleetValidateOptions = { payload: payloadOptions(values) };
  if (!values.allreduce) return options;
  if (carrier.kind !== "slurm")
    throw new UserError(
      "--allreduce runs through torchrun under srun: it needs --slurm",
      "drop --allreduce for --kube or --hosts",
    );
  const port = positiveInt(
    values["allreduce-port"],
    "--allreduce-port",
    29400 + Math.floor(Math.random() * 500),
  );
  return { ...options, allreduce: { selection: carrier.selection, port } };
}

/** --dry-run with --kube: the Job manifests of every step, no API call needed. */
async function printManifests(
  sub: "doctor" | "scan" | "validate",
  values: Values,
  options: FleetGatherOptions,
): Promise<number> {
  const steps: Array<{ script: string; args: string[]; timeoutMs: number }> = [
    { script: probeSource(options.probeNonce), args: probeArgs(options), timeoutMs: options.nodeTimeoutMs },
  ];
  if (sub === "validate")
    steps.push({
      script: payloadScript(newNonce()),
      args: payloadArgs(payloadOptions(values)),
      timeoutMs: Math.max(options.nodeTimeoutMs, 900_000),
    });
  const documents: string[] = [];
  for (const step of steps)
    documents.push(
      await printKubeManifests(
        kubeSelection(values),
        values.python ?? "python3",
        step.script,
        step.args,
        step.timeoutMs,
      ),
    );
  writeDocument(documents.join("---\n"));
  return EXIT_OK;
}

async function submit(
  sub: "doctor" | "scan",
  values: Values,
  carrier: FleetCarrier,
  options: FleetGatherOptions,
): Promise<number> {
  if (carrier.kind !== "slurm") throw new UserError("--submit is for Slurm", "drop --submit, or use --slurm");
  const job = await submitBatch({
    exec: execSlurm,
    env: process.env,
    selection: carrier.selection,
    python: carrier.python,
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

function judging(values: Values): Pick<FleetRunOptions, "baseline" | "packages"> {
  return {
    ...(values.baseline ? { baseline: readBaseline(values.baseline) } : {}),
    packages: packagePolicy(values["ignore-package"] ?? []),
  };
}

async function runSub(
  sub: "doctor" | "scan" | "validate",
  values: Values,
  paths: string[],
  extra: string[],
): Promise<number> {
  const where = pickTransport(values, sub);
  const carrier = carrierFor(where, values, paths, extra);
  const gather = gatherOptions(values);
  if (values["dry-run"]) {
    if (carrier.kind !== "kube") throw new UserError("--dry-run is for --kube", "drop --dry-run");
    return printManifests(sub, values, gather);
  }
  if (values.submit) {
    if (sub === "validate")
      throw new UserError("--submit is for fleet doctor and scan", "run fleet validate inside an allocation");
    return submit(sub, values, carrier, gather);
  }
  const { report, results } = await runFleet({
    mode: sub,
    carrier,
    gather,
    ...judging(values),
    ...(sub === "validate" ? { validate: validateOptions(values, carrier) } : {}),
  });
  if (values.save) saveSnapshots(values.save, results);
  return emitReport(report, values);
}

async function runCollect(values: Values, paths: string[]): Promise<number> {
  const jobId = paths[0];
  if (!jobId || paths.length > 1)
    throw new UserError("fleet collect takes one JOBID", "gpuprep fleet collect 123456 [--job-dir DIR]");
  const { report, results } = await collectFleetJob(values["job-dir"] ?? "gpuprep-fleet-jobs", jobId, {
    gather: gatherOptions(values),
    ...judging(values),
    dropUnavailable: values["drop-unavailable"] === true,
  });
  if (values.save) saveSnapshots(values.save, results);
  return emitReport(report, values);
}

async function runCheck(values: Values): Promise<number> {
  if (!values.node)
    throw new UserError(
      "fleet check checks this node: pass --node",
      "gpuprep fleet check --node --baseline FILE",
    );
  if (!values.baseline)
    throw new UserError(
      "fleet check --node needs --baseline FILE: what this node should be",
      "gpuprep fleet check --node --baseline /etc/gpuprep/baseline.yaml",
    );
  const result = await checkNode(
    {
      python: values.python ?? "python3",
      // Inside NHC's or node-problem-detector's own limit (NHC kills at its TIMEOUT, 30 s by default).
      gather: {
        ...gatherOptions(values),
        nodeTimeoutMs: positiveInt(values["node-timeout"], "--node-timeout", 25) * 1000,
      },
      baseline: readBaseline(values.baseline),
      packages: packagePolicy(values["ignore-package"] ?? []),
    },
    loadKnowledgeBase(),
  );
  if (values.json) writeDocument(renderJsonDocument(FLEET_SCHEMA, FLEET_SCHEMA_VERSION, result.report));
  else writeText(renderNodeCheckLine(result));
  return result.exitCode;
}

const SUBCOMMANDS = ["doctor", "scan", "validate", "collect", "check"] as const;
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
    ["validate --slurm|--kube|--hosts LIST [--allreduce] [validate flags]"],
    ["collect  JOBID [--job-dir DIR] [--drop-unavailable]", "results of a job sent with --submit"],
    [
      "check    --node --baseline FILE",
      "this node against the baseline: one line, for NHC or\nnode-problem-detector",
    ],
  ],
  options: FLEET_OPTIONS,
  outputs: ["html", "junit"],
  outputDirs: ["save", "job-dir"],
  outro: `exit status: 0 no errors, 1 errors found (drift, a node's finding, a node not checked), 2 gpuprep
itself could not run`,
  examples: [
    ["salloc -N 16 -p gpu && gpuprep fleet doctor --slurm", "every node of a Slurm allocation"],
    [
      "gpuprep fleet doctor --kube --image ghcr.io/me/train:1 --html fleet.html",
      "every GPU node of a Kubernetes cluster",
    ],
    [
      "gpuprep fleet doctor --hosts 'gpu[01-16]' --baseline good-node.json",
      "16 hosts over ssh, judged against a known-good node",
    ],
    ["gpuprep fleet doctor --from snapshots/ --junit fleet.xml", "snapshots saved with --save, merged again"],
  ],
  async run({ values, tokens }) {
    const { sub, paths, extra } = splitPositionals(tokens);
    if (sub === "doctor" || sub === "scan" || sub === "validate") return runSub(sub, values, paths, extra);
    if (sub === "collect") return runCollect(values, paths);
    if (sub === "check") return runCheck(values);
    throw new UserError(
      sub === undefined
        ? "fleet: which check? doctor, scan, validate, collect or check"
        : `unknown fleet subcommand '${sub}'`,
      `subcommands: ${SUBCOMMANDS.join(", ")} (\`gpuprep help fleet\`)`,
    );
  },
});
