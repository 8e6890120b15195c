/**
 * Queued clusters: `--submit` writes an sbatch script that runs the same framed srun step and
 * submits it; `gpuprep fleet collect JOBID` reads the job's output file later and turns it into
 * per-node results. A small JSON file beside the script remembers what the job was asked.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { UserError, errorMessage } from "../errors.js";
import { READ_LIMITS, readJsonFile, readTextFile } from "../util/safe-read.js";
import type { NodeRun } from "./fleet-types.js";
import { newNonce, nodeWrapperArgv, pythonBootstrap } from "./node-frame.js";
import { shellQuote } from "./spawn.js";
import { hasControlCharacters, quotedForMessage } from "../util/single-line.js";
import {
  checkSelection,
  type Exec,
  type SlurmNode,
  type SlurmSelection,
  nodeRunsFromOutput,
  planNodes,
  stepOptions,
} from "./slurm.js";

export const JOB_META_SCHEMA = "gpuprep.fleet.job";

export interface BatchJob {
  schema: typeof JOB_META_SCHEMA;
  schemaVersion: 1;
  jobId: string;
  mode: string;
  nonce: string;
  /** The probe's own frame nonce (its --nonce), needed to read its result back. */
  probeNonce?: string;
  python: string;
  nodeTimeoutSeconds: number;
  script: string;
  output: string;
  /** Nodes reported down when the job was submitted (not asked). */
  down: SlurmNode[];
  submittedAt: string;
}

/**
 * The sbatch script: the nodes line and the framed srun step, nothing the user typed outside a
 * shell-quoted word. The allocation (partition, time, account, nodes, output) goes to sbatch as
 * arguments (sbatchArgv), never as #SBATCH lines: a value holding a newline there would end the
 * comment and run its next line on the cluster (issue 28).
 */
export function batchScript(selection: SlurmSelection, nonce: string, nodeCommand: string[]): string {
  const srun = [
    "srun",
    "--label",
    "--kill-on-bad-exit=0",
    ...(selection.containerImage ? [`--container-image=${selection.containerImage}`] : []),
    ...(selection.containerMounts ? [`--container-mounts=${selection.containerMounts}`] : []),
    ...(selection.extraSrunArgs ?? []),
    ...nodeCommand,
  ];
  return [
    "#!/bin/sh",
    "# Written by gpuprep fleet --submit, which passed the allocation to sbatch as arguments;",
    "# read back with: gpuprep fleet collect $SLURM_JOB_ID",
    `printf '@gpuprep %s nodes %s\\n' ${shellQuote(nonce)} "$(scontrol show hostnames "$SLURM_JOB_NODELIST" | tr '\\n' ' ')"`,
    srun.map(shellQuote).join(" "),
    "",
  ].join("\n");
}

/** sbatch's arguments: the allocation options as srun would take them, the output file, the script. */
export function sbatchArgv(
  selection: SlurmSelection,
  nodes: string[] | null,
  output: string,
  scriptPath: string,
): string[] {
  const allocation = stepOptions(
    { ...selection, containerImage: undefined, containerMounts: undefined, extraSrunArgs: [] },
    nodes,
  );
  return ["--parsable", "--job-name=gpuprep-fleet", `--output=${output}`, ...allocation, scriptPath];
}

export interface SubmitOptions {
  exec: Exec;
  env: NodeJS.ProcessEnv;
  selection: SlurmSelection;
  python: string;
  script: string;
  args: string[];
  probeNonce?: string;
  nodeTimeoutMs: number;
  jobDir: string;
  mode: string;
}

export async function submitBatch(options: SubmitOptions): Promise<BatchJob> {
  const { exec, selection } = options;
  checkSelection(selection);
  if (hasControlCharacters(options.jobDir))
    throw new UserError(
      `fleet: --job-dir ${quotedForMessage(options.jobDir)} holds a control character (a newline?)`,
      "pass a directory shared with the nodes, e.g. --job-dir ~/gpuprep-jobs",
    );
  const plan = await planNodes(exec, selection, {});
  if (plan.ask !== null && plan.ask.length === 0) {
    throw new UserError("every selected node is down; nothing to submit", "check the nodes with `sinfo -N`");
  }
  const dir = resolve(options.jobDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new UserError(
      `cannot create --job-dir ${dir}: ${errorMessage(error)}`,
      "pass a writable directory shared with the nodes",
    );
  }
  const nonce = newNonce();
  const limit = Math.ceil(options.nodeTimeoutMs / 1000);
  const command = nodeWrapperArgv(nonce, limit, [
    options.python,
    "-c",
    pythonBootstrap(options.script),
    ...options.args,
  ]);
  const scriptPath = join(dir, `gpuprep-fleet-${nonce}.sbatch`);
  const output = join(dir, "gpuprep-fleet-%j.out");
  writeFileSync(scriptPath, batchScript(selection, nonce, command), { mode: 0o755 });
  const argv = sbatchArgv(selection, plan.ask, output, scriptPath);
  const result = await exec("sbatch", argv, 60_000);
  const jobId = result.stdout.trim().split(";")[0] ?? "";
  if (result.code !== 0 || !/^\d+$/.test(jobId)) {
    throw new UserError(
      `sbatch refused the job: ${result.stderr.trim().split("\n")[0] ?? `exit ${String(result.code)}`}`,
      `check the options with: sbatch --test-only ${argv
        .filter((a) => a !== "--parsable")
        .map(shellQuote)
        .join(" ")}`,
    );
  }
  const job: BatchJob = {
    schema: JOB_META_SCHEMA,
    schemaVersion: 1,
    jobId,
    mode: options.mode,
    nonce,
    ...(options.probeNonce ? { probeNonce: options.probeNonce } : {}),
    python: options.python,
    nodeTimeoutSeconds: limit,
    script: scriptPath,
    output: output.replace("%j", jobId),
    down: plan.down,
    submittedAt: new Date().toISOString(),
  };
  writeFileSync(jobMetaPath(dir, jobId), JSON.stringify(job, null, 1) + "\n");
  return job;
}

export function jobMetaPath(jobDir: string, jobId: string): string {
  return join(resolve(jobDir), `gpuprep-fleet-${jobId}.json`);
}

export function readBatchJob(jobDir: string, jobId: string): BatchJob {
  const path = jobMetaPath(jobDir, jobId);
  const hint = "pass the --job-dir the job was submitted with";
  let data: Partial<BatchJob> | null;
  try {
    // util/safe-read: capped, regular files only, and never quoted when it is not JSON.
    data = readJsonFile(path, {
      maxBytes: READ_LIMITS.fleetJob,
      hint,
      origin: `fleet job file ${path}`,
    }) as Partial<BatchJob> | null;
  } catch (error) {
    if (!/ENOENT/.test(errorMessage(error))) throw error;
    throw new UserError(`no gpuprep fleet job ${jobId} in ${resolve(jobDir)}`, hint);
  }
  if (
    typeof data !== "object" ||
    data === null ||
    data.schema !== JOB_META_SCHEMA ||
    typeof data.nonce !== "string" ||
    typeof data.output !== "string"
  ) {
    throw new UserError(
      `${path} is not a gpuprep fleet job file`,
      "submit again with gpuprep fleet ... --submit",
    );
  }
  return data as BatchJob;
}

/** scontrol's JobState, or null when Slurm no longer knows the job (then its output decides). */
export async function jobState(exec: Exec, jobId: string): Promise<string | null> {
  try {
    const result = await exec("scontrol", ["show", "job", jobId, "-o"], 30_000);
    if (result.code !== 0) return null;
    return /JobState=(\S+)/.exec(result.stdout)?.[1] ?? null;
  } catch {
    return null;
  }
}

const STILL_GOING = /^(PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|RESIZING|SUSPENDED)$/;

export async function collectBatch(
  exec: Exec | null,
  jobDir: string,
  jobId: string,
): Promise<{ job: BatchJob; runs: NodeRun[] }> {
  if (!/^\d+$/.test(jobId))
    throw new UserError(`fleet collect: "${jobId}" is not a Slurm job id`, "pass the number sbatch printed");
  const job = readBatchJob(jobDir, jobId);
  const state = exec ? await jobState(exec, jobId) : null;
  if (state && STILL_GOING.test(state)) {
    throw new UserError(
      `job ${jobId} is ${state}; its results are not complete yet`,
      `wait for it (squeue -j ${jobId}) and collect again`,
    );
  }
  const output = readTextFile(job.output, {
    maxBytes: READ_LIMITS.fleetOutput,
    hint: "the job may not have started; check `sacct -j " + jobId + "`",
  });
  const nodesLine = new RegExp(`^@gpuprep ${job.nonce} nodes (.*)$`, "m").exec(output);
  const expected = (nodesLine?.[1] ?? "").split(/\s+/).filter(Boolean);
  const killed = state !== null && /TIMEOUT|CANCELLED|NODE_FAIL|PREEMPTED/.test(state);
  const runs = nodeRunsFromOutput(output, "", job.nonce, expected, job.nodeTimeoutSeconds, killed);
  const down: NodeRun[] = job.down.map((n) => ({
    node: n.name,
    state: "down",
    reason: `Slurm reported it ${n.state}${n.reason ? ` (${n.reason})` : ""} at submission; not asked`,
    result: null,
    durationMs: null,
  }));
  if (runs.length === 0 && down.length === 0) {
    throw new UserError(
      `job ${jobId}'s output has no gpuprep results${state ? ` (job ${state})` : ""}`,
      `read ${job.output} for the reason`,
    );
  }
  return { job, runs: [...runs, ...down] };
}
