/**
 * `gpuprep fleet doctor|scan|validate|collect`: the same checks on many nodes (Slurm, Kubernetes,
 * or saved snapshots), merged into one report: groups of identical nodes, drift between them,
 * nodes that did not answer, and every node's findings once with the nodes they fired on.
 */
import { writeText } from "../report/terminal.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { EXIT_OK, type Command } from "./command.js";
import { parseCommandArgs } from "./args.js";
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
import { execSlurm, slurmTransport, type SlurmSelection } from "../transports/slurm.js";
import { collectBatch, JOB_META_SCHEMA, submitBatch } from "../transports/slurm-batch.js";
import { newNonce } from "../transports/node-frame.js";
import type { FleetTransport } from "../transports/fleet-types.js";
import { renderJsonDocument } from "../report/envelope.js";
import { FLEET_JOB_SCHEMA_VERSION, FLEET_SCHEMA, FLEET_SCHEMA_VERSION } from "../report/document-ids.js";
import { renderFleetText } from "../report/fleet-text.js";
import { toFleetHtmlReport } from "../report/fleet-html.js";
import { fleetJUnitSuites } from "../report/fleet-junit.js";
import { renderHtmlReport } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import { kubeTransport, type KubeSelection } from "../transports/kube.js";
import { runFleetValidate, VALIDATE_OPTIONS } from "./fleet-validate.js";

const HELP = `gpuprep fleet: doctor / validate on many nodes, one merged report

usage:
  gpuprep fleet doctor   --slurm [slurm flags] | --kube [kube flags] | --from DIR|FILE...
  gpuprep fleet scan     the same nodes, per-node rules limited to GPU architecture coverage
                         (torch arch list, extension and binary targets vs each node's GPU)
  gpuprep fleet validate --slurm [--allreduce] [validate flags]
  gpuprep fleet collect  JOBID [--job-dir DIR]     results of a job sent with --submit

Slurm (runs the probe once per node: srun --ntasks-per-node=1):
  --slurm                  inside an allocation: its nodes; outside: a new job (srun --immediate)
  --partition P  --nodes N  --nodelist LIST  --account A  --time T
  --container-image IMG    run inside this image through pyxis/enroot (--container-mounts M)
  --srun-arg ARG           one more srun argument, e.g. --srun-arg=--gres=gpu:1 (repeatable;
                           arguments after -- are passed to srun too)
  --wait SECONDS           how long srun may wait for free nodes outside an allocation (60)
  --submit                 queued clusters: write and sbatch a job instead, then later
                           \`gpuprep fleet collect JOBID\`; --job-dir DIR (default ./gpuprep-fleet-jobs)

Kubernetes (one Job per GPU node, results from the pod logs):
  --kube                   the API server and credentials of the current kubeconfig context
  --kubeconfig FILE  --context NAME  --namespace NS (default: default)
  --image IMG              the image with your Python environment (required)
  --selector SEL           node label selector (default: nodes with nvidia.com/gpu capacity or
                           GPU Feature Discovery's nvidia.com/gpu.* labels)
  --dry-run                print the Job manifests (YAML) and run nothing

Replay:
  --from DIR|FILE...       merge snapshots saved with \`gpuprep doctor --save\` (or fleet --save)

Common:
  --python PY              the interpreter on the nodes (default python3)
  --node-timeout SECONDS   per-node limit; a node over it is reported hung (default 180)
  --fast  --import-check MOD  --project DIR    as in doctor
  --save DIR               write each node's facts snapshot to DIR/NODE.json (for --from)
  --json                   the merged report (schema gpuprep.fleet)
  --html FILE              self-contained HTML with a node x check matrix
  --junit FILE             JUnit XML, one testcase per node

exit status: 0 no errors, 1 errors found (drift, a node's finding, a node not checked), 2 gpuprep
itself could not run`;

export const FLEET_OPTIONS = {
  slurm: { type: "boolean" },
  kube: { type: "boolean" },
  from: { type: "string", multiple: true },
  partition: { type: "string", short: "p" },
  nodes: { type: "string", short: "N" },
  nodelist: { type: "string", short: "w" },
  account: { type: "string", short: "A" },
  time: { type: "string", short: "t" },
  "container-image": { type: "string" },
  "container-mounts": { type: "string" },
  "srun-arg": { type: "string", multiple: true },
  wait: { type: "string" },
  submit: { type: "boolean" },
  "job-dir": { type: "string" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string" },
  image: { type: "string" },
  selector: { type: "string" },
  "dry-run": { type: "boolean" },
  python: { type: "string" },
  "node-timeout": { type: "string" },
  fast: { type: "boolean" },
  "import-check": { type: "string", multiple: true },
  project: { type: "string" },
  save: { type: "string" },
  json: { type: "boolean" },
  html: { type: "string" },
  junit: { type: "string" },
  ...VALIDATE_OPTIONS,
} as const;

type Values = ReturnType<typeof parseFleetArgs>["values"];

function parseFleetArgs(sub: string, argv: string[]) {
  return parseCommandArgs(
    `fleet ${sub}`,
    {
      args: argv,
      options: FLEET_OPTIONS,
      allowPositionals: true,
      tokens: true,
    },
    { outputs: ["html", "junit"], outputDirs: ["save", "job-dir"] },
  );
}

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

/** Arguments after `--` go to srun; other positionals are --from paths. */
function splitPositionals(tokens: NonNullable<ReturnType<typeof parseFleetArgs>["tokens"]>): {
  paths: string[];
  extra: string[];
} {
  const paths: string[] = [];
  const extra: string[] = [];
  let afterTerminator = false;
  for (const token of tokens) {
    if (token.kind === "option-terminator") afterTerminator = true;
    else if (token.kind === "positional") (afterTerminator ? extra : paths).push(token.value);
  }
  return { paths, extra };
}

function checkedModules(names: string[]): string[] {
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(name)) {
      throw new UserError(
        `fleet: --import-check "${name}" is not a Python module name`,
        "e.g. --import-check my_ext",
      );
    }
  }
  return names;
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
    importChecks: checkedModules(values["import-check"] ?? []),
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
  if (values.json) process.stdout.write(renderJsonDocument(FLEET_SCHEMA, FLEET_SCHEMA_VERSION, report));
  else writeText(renderFleetText(report, makeStyle(useColor())));
  return report.summary.exitCode;
}

async function runDoctor(sub: "doctor" | "scan", argv: string[]): Promise<number> {
  const { values, tokens } = parseFleetArgs(sub, argv);
  const { paths, extra } = splitPositionals(tokens ?? []);
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
      process.stdout.write(
        await printKubeManifests(
          kubeSelection(values),
          values.python ?? "python3",
          probeSource(),
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
        script: probeSource(),
        args: probeArgs(options),
        probeNonce: options.probeNonce,
        nodeTimeoutMs: options.nodeTimeoutMs,
        jobDir: values["job-dir"] ?? "gpuprep-fleet-jobs",
        mode: sub,
      });
      (values.json ? (t: string) => process.stdout.write(t) : writeText)(
        values.json
          ? renderJsonDocument(JOB_META_SCHEMA, FLEET_JOB_SCHEMA_VERSION, job)
          : `submitted job ${job.jobId} (script ${job.script}); when it has run: gpuprep fleet collect ${job.jobId}${values["job-dir"] ? ` --job-dir ${values["job-dir"]}` : ""}\n`,
      );
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

async function runCollect(argv: string[]): Promise<number> {
  const { values, tokens } = parseFleetArgs("collect", argv);
  const { paths } = splitPositionals(tokens ?? []);
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

export const fleetCommand: Command = {
  name: "fleet",
  summary: "doctor / validate across Slurm or Kubernetes nodes, drift between them",
  help: HELP,
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
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "doctor" || sub === "scan") return runDoctor(sub, rest);
    if (sub === "collect") return runCollect(rest);
    if (sub === "validate") {
      const { values, tokens } = parseFleetArgs("validate", rest);
      const { paths, extra } = splitPositionals(tokens ?? []);
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
      "subcommands: doctor, scan, validate, collect (`gpuprep help fleet`)",
    );
  },
};
