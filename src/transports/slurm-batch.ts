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
  checkPartition,
  checkSelection,
  type Exec,
  type SlurmNode,
  type SlurmSelection,
  expandHostlist,
  listNodes,
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
  /** Nodes reported down when the job was submitted (not asked), with why where known. */
  down: Array<SlurmNode & { why?: string }>;
  /** The nodes the job was asked to run on (null: --nodes N, Slurm picks). */
  asked?: string[] | null;
  /** Nodes taken out of the job while it waited (fleet collect --drop-unavailable), with why. */
  dropped?: Array<{ name: string; why: string }>;
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
    "--no-kill",
    "--ntasks-per-node=1",
    ...(selection.containerImage ? [`--container-image=${selection.containerImage}`] : []),
    ...(selection.containerMounts ? [`--container-mounts=${selection.containerMounts}`] : []),
    ...(selection.extraSrunArgs ?? []),
    ...nodeCommand,
  ];
  // One task per node of the allocation as it is when the job starts (collect --drop-unavailable
  // may have changed it): Slurm's own count, not the one at submission.
  const counted = '--nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES"';
  return [
    "#!/bin/sh",
    "# Written by gpuprep fleet --submit, which passed the allocation to sbatch as arguments;",
    "# read back with: gpuprep fleet collect $SLURM_JOB_ID",
    `printf '@gpuprep %s nodes %s\\n' ${shellQuote(nonce)} "$(scontrol show hostnames "$SLURM_JOB_NODELIST" | tr '\\n' ' ')"`,
    [shellQuote("srun"), counted, ...srun.slice(1).map(shellQuote)].join(" "),
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

interface SubmitOptions {
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

/** The job directory, made where missing; a one-line error where it cannot be. */
function createJobDir(jobDir: string): string {
  const dir = resolve(jobDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new UserError(
      `cannot create --job-dir ${dir}: ${errorMessage(error)}`,
      "pass a writable directory shared with the nodes",
    );
  }
  return dir;
}

/** Submits with sbatch --parsable; the job id, or sbatch's refusal with the --test-only line to check it. */
async function sbatch(exec: Exec, argv: string[]): Promise<string> {
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
  return jobId;
}

export async function submitBatch(options: SubmitOptions): Promise<BatchJob> {
  const { exec, selection } = options;
  checkSelection(selection);
  if (hasControlCharacters(options.jobDir))
    throw new UserError(
      `fleet: --job-dir ${quotedForMessage(options.jobDir)} holds a control character (a newline?)`,
      "pass a directory shared with the nodes, e.g. --job-dir ~/gpuprep-jobs",
    );
  await checkPartition(exec, selection);
  const plan = await planNodes(exec, selection, {});
  if (plan.ask !== null && plan.ask.length === 0) {
    throw new UserError("every selected node is down; nothing to submit", "check the nodes with `sinfo -N`");
  }
  const dir = createJobDir(options.jobDir);
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
  const jobId = await sbatch(exec, sbatchArgv(selection, plan.ask, output, scriptPath));
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
    asked: plan.ask,
    submittedAt: new Date().toISOString(),
  };
  writeFileSync(jobMetaPath(dir, jobId), JSON.stringify(job, null, 1) + "\n");
  return job;
}

function jobMetaPath(jobDir: string, jobId: string): string {
  return join(resolve(jobDir), `gpuprep-fleet-${jobId}.json`);
}

function readBatchJob(jobDir: string, jobId: string): BatchJob {
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

/** What `scontrol show job -o` says of a job, or null when Slurm no longer knows it (then its output decides). */
interface JobStatus {
  state: string;
  /** Slurm's reason a pending job waits: "ReqNodeNotAvail,_UnavailableNodes:n2", "Resources", ... */
  reason: string | null;
  /** The nodes it asked for (ReqNodeList), expanded. */
  requested: string[];
}

async function jobStatus(exec: Exec, jobId: string): Promise<JobStatus | null> {
  try {
    const result = await exec("scontrol", ["show", "job", jobId, "-o"], 30_000);
    if (result.code !== 0) return null;
    const state = /JobState=(\S+)/.exec(result.stdout)?.[1];
    if (!state) return null;
    const reason = /\bReason=(\S+)/.exec(result.stdout)?.[1] ?? null;
    const list = /\bReqNodeList=(\S+)/.exec(result.stdout)?.[1];
    const requested = list && list !== "(null)" ? await expandHostlist(exec, list) : [];
    return { state, reason: reason === "None" ? null : reason, requested };
  } catch {
    return null;
  }
}

const STILL_GOING = /^(PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|RESIZING|SUSPENDED)$/;

/** "ReqNodeNotAvail,_UnavailableNodes:n2,n5" -> n2, n5 (expanded). */
async function unavailableNodes(exec: Exec, reason: string | null): Promise<string[]> {
  const list = /UnavailableNodes:(\S+)/.exec(reason ?? "")?.[1];
  return list ? expandHostlist(exec, list) : [];
}

/**
 * A job whose node list holds nodes that went down or were drained while it waited pends until
 * they come back, maybe for ever. With --drop-unavailable, gpuprep takes them out of its own job
 * (scontrol update JobId NodeList NumNodes NumTasks) so it runs on the others, and remembers them
 * as not checked. Without it, the error says which nodes the job waits for and what to do.
 */
async function handlePending(
  exec: Exec,
  job: BatchJob,
  status: JobStatus,
  dropUnavailable: boolean,
  jobDir: string,
): Promise<never> {
  const unavailable = await unavailableNodes(exec, status.reason);
  const waitsFor = unavailable.filter((n) => status.requested.includes(n));
  const rest = status.requested.filter((n) => !waitsFor.includes(n));
  if (status.state !== "PENDING" || waitsFor.length === 0 || rest.length === 0) {
    throw new UserError(
      `job ${job.jobId} is ${status.state}${status.reason ? ` (${status.reason})` : ""}; its results are not complete yet`,
      `wait for it (squeue -j ${job.jobId}) and collect again`,
    );
  }
  const states = await listNodes(exec, {}, waitsFor).catch(() => []);
  const why = (n: string) => {
    const node = states.find((s) => s.name === n);
    return node ? `${node.state}${node.reason ? `: ${node.reason}` : ""}` : "not available";
  };
  const listed = waitsFor.map((n) => `${n} (${why(n)})`).join(", ");
  if (!dropUnavailable) {
    throw new UserError(
      `job ${job.jobId} waits for ${listed}, taken out of service after it was submitted; it runs only when they return`,
      `gpuprep fleet collect ${job.jobId} --drop-unavailable takes them out of the job so it runs on the other ${rest.length} node${rest.length === 1 ? "" : "s"}`,
    );
  }
  const update = [
    "update",
    `JobId=${job.jobId}`,
    `NodeList=${rest.join(",")}`,
    `NumNodes=${rest.length}`,
    `NumTasks=${rest.length}`,
  ];
  const result = await exec("scontrol", update, 30_000);
  if (result.code !== 0)
    throw new UserError(
      `scontrol ${update.join(" ")} failed: ${result.stderr.trim().split("\n")[0] ?? ""}`,
      "cancel the job and submit again",
    );
  job.dropped = [...(job.dropped ?? []), ...waitsFor.map((name) => ({ name, why: why(name) }))];
  writeFileSync(jobMetaPath(jobDir, job.jobId), JSON.stringify(job, null, 1) + "\n");
  throw new UserError(
    `job ${job.jobId} waited for ${listed}: gpuprep took ${waitsFor.length === 1 ? "it" : "them"} out of the job (scontrol ${update.join(" ")}); it runs on the other ${rest.length} now`,
    `collect again when it has run: gpuprep fleet collect ${job.jobId}`,
  );
}

/** Nodes the job did not run on: down at submission, or taken out while it waited. */
function notRunRuns(job: BatchJob, ran: Set<string>): NodeRun[] {
  const runs: NodeRun[] = job.down.map((n) => ({
    node: n.name,
    state: "down",
    reason: `${n.why ?? `Slurm reported it ${n.state}${n.reason ? ` (${n.reason})` : ""}`} at submission; not asked`,
    result: null,
    durationMs: null,
  }));
  for (const d of job.dropped ?? []) {
    if (ran.has(d.name)) continue;
    runs.push({
      node: d.name,
      state: "down",
      reason: `${d.why}: taken out of the job while it waited (--drop-unavailable); not asked`,
      result: null,
      durationMs: null,
    });
  }
  return runs;
}

export async function collectBatch(
  exec: Exec | null,
  jobDir: string,
  jobId: string,
  dropUnavailable = false,
): Promise<{ job: BatchJob; runs: NodeRun[] }> {
  if (!/^\d+$/.test(jobId))
    throw new UserError(`fleet collect: "${jobId}" is not a Slurm job id`, "pass the number sbatch printed");
  const job = readBatchJob(jobDir, jobId);
  const status = exec ? await jobStatus(exec, jobId) : null;
  if (exec && status && STILL_GOING.test(status.state))
    await handlePending(exec, job, status, dropUnavailable, jobDir);
  const output = readTextFile(job.output, {
    maxBytes: READ_LIMITS.fleetOutput,
    hint: "the job may not have started; check `sacct -j " + jobId + "`",
  });
  const nodesLine = new RegExp(`^@gpuprep ${job.nonce} nodes (.*)$`, "m").exec(output);
  const expected = (nodesLine?.[1] ?? "").split(/\s+/).filter(Boolean);
  const killed = status !== null && /TIMEOUT|CANCELLED|NODE_FAIL|PREEMPTED/.test(status.state);
  const runs = nodeRunsFromOutput(output, "", job.nonce, expected, job.nodeTimeoutSeconds, killed);
  const down = notRunRuns(job, new Set(runs.map((r) => r.node)));
  if (runs.length === 0 && down.length === 0) {
    throw new UserError(
      `job ${jobId}'s output has no gpuprep results${status ? ` (job ${status.state})` : ""}`,
      `read ${job.output} for the reason`,
    );
  }
  return { job, runs: [...runs, ...down] };
}
