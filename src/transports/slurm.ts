/**
 * The probe on every node of a Slurm cluster: one `srun --ntasks-per-node=1` step (a job when
 * run outside an allocation), optionally inside the job's container image through pyxis. Nodes
 * the scheduler reports down are not asked; each asked node's output comes back framed
 * (node-frame.ts), and a node that does not finish in its time limit is reported, not waited for.
 */
import { UserError } from "../errors.js";
import { hasControlCharacters, quotedForMessage } from "../util/single-line.js";
import { CommandNotFoundError, runWithInput } from "./spawn.js";
import type { RunResult } from "./types.js";
import type { FleetTransport, NodeRun } from "./fleet-types.js";
import { newNonce, nodeRunFromFrame, nodeWrapperArgv, parseFrames, pythonBootstrap } from "./node-frame.js";

export interface SlurmSelection {
  partition?: string;
  /** How many nodes; default every responsive node of the selection. */
  nodes?: number;
  /** A Slurm hostlist: "gpu[01-16],gpu20". */
  nodelist?: string;
  account?: string;
  /** srun/sbatch --time (the job's limit; the per-node limit is separate). */
  time?: string;
  /** pyxis: --container-image and, optionally, --container-mounts. */
  containerImage?: string;
  containerMounts?: string;
  /** Passed to srun as they are (--gres=gpu:1, --reservation=x, ...). */
  extraSrunArgs?: string[];
  /** Outside an allocation: how long srun may wait for nodes before giving up (srun --immediate). */
  allocationWaitSeconds?: number;
}

/**
 * Every value of a selection on one line, before srun or sbatch sees it: a control character in a
 * partition, time, node list or extra argument is a typo or an attack (a newline in a job script
 * starts a command), never a Slurm value. Throws a one-line UserError naming the flag.
 */
export function checkSelection(selection: SlurmSelection): void {
  const named: [string, string | undefined][] = [
    ["--partition", selection.partition],
    ["--nodelist", selection.nodelist],
    ["--account", selection.account],
    ["--time", selection.time],
    ["--container-image", selection.containerImage],
    ["--container-mounts", selection.containerMounts],
    ...(selection.extraSrunArgs ?? []).map((arg): [string, string] => ["an srun argument", arg]),
  ];
  for (const [flag, value] of named) {
    if (value !== undefined && hasControlCharacters(value))
      throw new UserError(
        `fleet: ${flag} ${quotedForMessage(value)} holds a control character (a newline?)`,
        "Slurm values are one line: partition, time (e.g. 30:00), node list (gpu[01-04])",
      );
  }
}

/** A node as sinfo reports it. */
export interface SlurmNode {
  name: string;
  state: string;
  reason: string | null;
}

/** States in which a node cannot run a step now (sinfo %T; a trailing * means not responding). */
const UNAVAILABLE =
  /^(down|drain|drained|draining|fail|failing|future|unknown|no_respond|power_down|powered_down|powering_down|powering_up|reboot_issued|reboot_requested|inval|maint|planned)/i;

export function nodeIsAvailable(node: SlurmNode): boolean {
  return !node.state.endsWith("*") && !UNAVAILABLE.test(node.state);
}

export type Exec = (command: string, args: string[], timeoutMs: number) => Promise<RunResult>;

/** Runs a Slurm client command; a missing command is the one-line "no Slurm here" error. */
export const execSlurm: Exec = async (command, args, timeoutMs) => {
  try {
    return await runWithInput(command, args, "", timeoutMs);
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new UserError(
        `${command} is not on PATH: this machine has no Slurm client commands`,
        "run gpuprep fleet on a Slurm login node, or use --kube or --from DIR",
      );
    }
    throw error;
  }
};

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "")
      ?.slice(0, 300) ?? ""
  );
}

async function checked(exec: Exec, command: string, args: string[]): Promise<string> {
  const result = await exec(command, args, 60_000);
  if (result.timedOut)
    throw new UserError(`${command} did not answer within 60 s`, "is slurmctld up? try `sinfo`");
  if (result.code !== 0) {
    throw new UserError(
      `${command} ${args.join(" ")} failed: ${firstLine(result.stderr) || `exit ${String(result.code)}`}`,
      "check the partition and node names with `sinfo`",
    );
  }
  return result.stdout;
}

/** scontrol show hostnames: "gpu[01-03]" -> gpu01 gpu02 gpu03 (Slurm's own expansion). */
export async function expandHostlist(exec: Exec, hostlist: string): Promise<string[]> {
  const out = await checked(exec, "scontrol", ["show", "hostnames", hostlist]);
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

export function parseSinfo(stdout: string): SlurmNode[] {
  const seen = new Map<string, SlurmNode>();
  for (const line of stdout.split("\n")) {
    const [name, state, reason] = line.split("|");
    if (!name?.trim() || !state) continue;
    // A node in two partitions is listed twice.
    if (!seen.has(name.trim())) {
      const why = reason?.trim();
      seen.set(name.trim(), {
        name: name.trim(),
        state: state.trim(),
        reason: why && why !== "none" ? why : null,
      });
    }
  }
  return [...seen.values()];
}

export async function listNodes(
  exec: Exec,
  selection: SlurmSelection,
  names?: string[],
): Promise<SlurmNode[]> {
  const args = ["-h", "-N", "-o", "%N|%T|%E"];
  if (selection.partition) args.push("-p", selection.partition);
  if (names) args.push("-n", names.join(","));
  return parseSinfo(await checked(exec, "sinfo", args));
}

/** pyxis adds --container-image to srun's own help when its SPANK plugin is loaded. */
export async function pyxisAvailable(exec: Exec): Promise<boolean> {
  const help = await exec("srun", ["--help"], 30_000);
  return /--container-image/.test(help.stdout + help.stderr);
}

/** The srun options that pick the nodes and the container; the same for srun and sbatch's srun. */
export function stepOptions(selection: SlurmSelection, nodes: string[] | null): string[] {
  const args: string[] = [];
  if (nodes) args.push(`--nodes=${nodes.length}`, `--nodelist=${nodes.join(",")}`);
  else if (selection.nodes !== undefined) args.push(`--nodes=${selection.nodes}`);
  args.push("--ntasks-per-node=1");
  if (nodes) args.push(`--ntasks=${nodes.length}`);
  if (selection.partition) args.push(`--partition=${selection.partition}`);
  if (selection.account) args.push(`--account=${selection.account}`);
  if (selection.time) args.push(`--time=${selection.time}`);
  if (selection.containerImage) args.push(`--container-image=${selection.containerImage}`);
  if (selection.containerMounts) args.push(`--container-mounts=${selection.containerMounts}`);
  return [...args, ...(selection.extraSrunArgs ?? [])];
}

export function srunArgv(
  selection: SlurmSelection,
  nodes: string[] | null,
  insideAllocation: boolean,
  nodeCommand: string[],
): string[] {
  // --no-kill: a node that fails mid-run ends only its own task, not the step on every node.
  const args = ["--label", "--kill-on-bad-exit=0", "--no-kill", "--job-name=gpuprep-fleet"];
  // Outside an allocation srun would queue forever on a busy cluster; --submit is for that.
  if (!insideAllocation) args.push(`--immediate=${selection.allocationWaitSeconds ?? 60}`);
  return [...args, ...stepOptions(selection, nodes), ...nodeCommand];
}

interface SlurmTransportOptions {
  selection: SlurmSelection;
  python: string;
  env?: NodeJS.ProcessEnv;
  exec?: Exec;
  /** Extra seconds beyond the per-node limit for srun to launch and return the frames. */
  launchGraceSeconds?: number;
}

function insideAllocation(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env["SLURM_JOB_ID"] ?? env["SLURM_JOBID"]);
}

/** An active reservation as `scontrol show reservation -o` lists it. */
interface SlurmReservation {
  name: string;
  /** The hostlist expression of its nodes (expanded by scontrol when needed). */
  nodes: string;
  maint: boolean;
}

function parseReservations(stdout: string): SlurmReservation[] {
  const out: SlurmReservation[] = [];
  for (const line of stdout.split("\n")) {
    const name = /ReservationName=(\S+)/.exec(line)?.[1];
    const nodes = /\bNodes=(\S+)/.exec(line)?.[1];
    const state = /\bState=(\S+)/.exec(line)?.[1];
    if (!name || !nodes || nodes === "(null)" || (state && state !== "ACTIVE")) continue;
    out.push({ name, nodes, maint: /\bFlags=\S*\bMAINT\b/.test(line) });
  }
  return out;
}

/** The reservation the user asked srun to run in (-- --reservation=NAME), if any. */
function reservationOf(selection: SlurmSelection): string | null {
  const args = selection.extraSrunArgs ?? [];
  for (const [i, arg] of args.entries()) {
    const inline = /^--reservation=(.+)$/.exec(arg);
    if (inline) return inline[1] ?? null;
    if (arg === "--reservation") return args[i + 1] ?? null;
  }
  return null;
}

/** States a node in the user's own reservation may be in and still run the step. */
const RESERVED_STATE = /^(maint|reserved|planned)$/i;

async function reservedNodes(exec: Exec): Promise<Map<string, SlurmReservation>> {
  const result = await exec("scontrol", ["show", "reservation", "-o"], 60_000);
  const byNode = new Map<string, SlurmReservation>();
  if (result.code !== 0) return byNode;
  for (const reservation of parseReservations(result.stdout)) {
    for (const node of await expandHostlist(exec, reservation.nodes)) byNode.set(node, reservation);
  }
  return byNode;
}

/**
 * A node's reason for not being asked, or null when it is asked: down, drained or not responding
 * nodes; nodes in a reservation the run does not use (a MAINT reservation reads "maint" in sinfo);
 * with -- --reservation=NAME, the nodes outside it (a job in a reservation runs only on its nodes).
 */
function whyNotAsked(
  node: SlurmNode,
  reservation: SlurmReservation | undefined,
  chosen: string | null,
): string | null {
  const state = node.state.replace(/\*$/, "");
  if (chosen !== null && reservation?.name === chosen) {
    if (node.state.endsWith("*")) return `Slurm reports it ${node.state} (not responding)`;
    return nodeIsAvailable(node) || RESERVED_STATE.test(state)
      ? null
      : `Slurm reports it ${node.state}${node.reason ? ` (${node.reason})` : ""}`;
  }
  if (reservation && (RESERVED_STATE.test(state) || reservation.maint)) {
    const kind = reservation.maint ? "maintenance reservation" : "reservation";
    return `in ${kind} ${reservation.name}; pass -- --reservation=${reservation.name} to check it`;
  }
  if (chosen !== null) return `not in reservation ${chosen} (a job in it runs only on its nodes)`;
  return nodeIsAvailable(node)
    ? null
    : `Slurm reports it ${node.state}${node.reason ? ` (${node.reason})` : ""}`;
}

/** A partition Slurm starts no job in (sinfo %a: down, drain, inactive) stops the run at once. */
export async function checkPartition(exec: Exec, selection: SlurmSelection): Promise<void> {
  const args = ["-h", "-o", "%P|%a"];
  if (selection.partition) args.push("-p", selection.partition);
  const rows = (await checked(exec, "sinfo", args))
    .split("\n")
    .map((l) => l.split("|"))
    .filter(([name]) => name);
  // Without -p, only the default partition (marked *) decides.
  const row = selection.partition ? rows[0] : rows.find(([name]) => name?.endsWith("*"));
  const availability = row?.[1]?.trim();
  if (availability && availability !== "up") {
    const name = (row?.[0] ?? "").replace(/\*$/, "");
    throw new UserError(
      `partition ${name} is ${availability.toUpperCase()}: Slurm starts no job there`,
      `ask for another partition (-p), or bring it up: scontrol update PartitionName=${name} State=UP`,
    );
  }
}

interface NodePlan {
  /** The nodes to ask (null: --nodes N, Slurm picks). */
  ask: string[] | null;
  /** Nodes not asked, each with why. */
  down: Array<SlurmNode & { why: string }>;
}

/** Which nodes to ask and which to report as not checked, with why. */
export async function planNodes(
  exec: Exec,
  selection: SlurmSelection,
  env: NodeJS.ProcessEnv,
): Promise<NodePlan> {
  let names: string[] | undefined;
  if (selection.nodelist) names = await expandHostlist(exec, selection.nodelist);
  else if (insideAllocation(env) && env["SLURM_JOB_NODELIST"])
    names = await expandHostlist(exec, env["SLURM_JOB_NODELIST"]);
  const known = await listNodes(exec, selection, names);
  if (names) {
    const unknown = names.filter((n) => !known.some((k) => k.name === n));
    if (unknown.length > 0) {
      throw new UserError(
        `Slurm does not know node${unknown.length > 1 ? "s" : ""} ${unknown.slice(0, 5).join(", ")}${selection.partition ? ` in partition ${selection.partition}` : ""}`,
        "list the nodes with `sinfo -N`",
      );
    }
  }
  if (known.length === 0) {
    throw new UserError(
      `Slurm lists no nodes${selection.partition ? ` in partition ${selection.partition}` : ""}`,
      "check the partition with `sinfo`",
    );
  }
  const chosen = reservationOf(selection);
  const reservations = await reservedNodes(exec);
  if (chosen !== null && ![...reservations.values()].some((r) => r.name === chosen))
    throw new UserError(
      `Slurm has no active reservation ${chosen}`,
      "list them with `scontrol show reservation`",
    );
  const down: NodePlan["down"] = [];
  const ask: string[] = [];
  for (const node of known) {
    const why = whyNotAsked(node, reservations.get(node.name), chosen);
    if (why === null) ask.push(node.name);
    else down.push({ ...node, why });
  }
  // --nodes N: Slurm picks N among the responsive nodes (or refuses); the others are still reported.
  if (selection.nodes !== undefined && !selection.nodelist) return { ask: null, down };
  return { ask, down };
}

function downRun(node: NodePlan["down"][number]): NodeRun {
  return { node: node.name, state: "down", reason: `${node.why}; not asked`, result: null, durationMs: null };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** srun's own complaint about one node ("srun: error: n4: task 3: Exited ..."), if any. */
function srunComplaint(lines: string[], node: string): string | null {
  const line = lines.find((l) => l.includes(`${node}:`) || l.includes(` ${node} `) || l.endsWith(` ${node}`));
  return line ? line.replace(/^srun: (error: )?/, "").slice(0, 200) : null;
}

/**
 * Turns srun's (or a batch job's) output into one NodeRun per node: framed nodes by their own
 * name, expected nodes with no frame as unreachable (or hung when srun had to be killed).
 */
export function nodeRunsFromOutput(
  stdout: string,
  stderr: string,
  nonce: string,
  expected: string[],
  limitSeconds: number,
  carrierKilled: boolean,
): NodeRun[] {
  const { frames, otherLines } = parseFrames(stdout, nonce, true);
  const complaints = [...otherLines, ...stderr.split("\n").filter((l) => l.trim() !== "")];
  const runs = new Map<string, NodeRun>();
  for (const [rank, frame] of frames) {
    const node = frame.node ?? `task ${rank}`;
    runs.set(node, nodeRunFromFrame(node, frame, limitSeconds, carrierKilled));
  }
  // A node Slurm declared failed while it ran (srun: "Node failure on n3"), or whose wrapper was
  // killed under it (the wrapper itself always exits 0): the node crashed; its frame, if any, was
  // cut off. Named so, not "hung" (issue 26 item 8).
  for (const node of expected) {
    const run = runs.get(node);
    const failure =
      complaints.find((l) => new RegExp(`Node failure on ${escapeRegExp(node)}\\b`).test(l)) ??
      (run && run.state === "hung" && !carrierKilled
        ? complaints.find((l) =>
            new RegExp(`\\b${escapeRegExp(node)}: task \\d+: (Killed|Terminated)`).test(l),
          )
        : undefined);
    if (!failure || run?.state === "ran") continue;
    runs.set(node, {
      node,
      state: "failed",
      reason: `the node failed during the run (${failure.replace(/^srun: (error: )?/, "srun: ").slice(0, 200)})`,
      result: null,
      durationMs: null,
    });
  }
  for (const node of expected) {
    if (runs.has(node)) continue;
    runs.set(node, {
      node,
      state: carrierKilled ? "hung" : "unreachable",
      reason:
        srunComplaint(complaints, node) ??
        (carrierKilled
          ? `no answer within the ${limitSeconds}s per-node limit`
          : "the command never started there (no output from the node)"),
      result: null,
      durationMs: null,
    });
  }
  return [...runs.values()];
}

/**
 * srun's own lines when it ran no node at all: its allocation error ("Unable to allocate
 * resources: ...") and what it said before it ("Partition in DOWN state", "Required node not
 * available (down, drained or reserved)"), joined on one line.
 */
function srunRefusal(result: RunResult): string {
  const lines = `${result.stderr}\n${result.stdout}`
    .split("\n")
    .map((l) => l.trim().replace(/^srun: (error: )?/, ""))
    .filter((l) => l !== "" && !/queued and waiting for resources|^job \d+ queued/.test(l));
  return [...new Set(lines)].slice(0, 3).join("; ").slice(0, 400) || `srun exited ${String(result.code)}`;
}

export function slurmTransport(options: SlurmTransportOptions): FleetTransport {
  const exec = options.exec ?? execSlurm;
  const env = options.env ?? process.env;
  const { selection, python } = options;
  checkSelection(selection);
  const where = [
    selection.partition ? `partition ${selection.partition}` : null,
    selection.nodelist ? `nodes ${selection.nodelist}` : null,
    selection.containerImage ? `image ${selection.containerImage} (pyxis)` : null,
  ].filter(Boolean);
  return {
    kind: "slurm",
    python,
    describe: () =>
      `Slurm${where.length ? ` ${where.join(", ")}` : ""} (srun${insideAllocation(env) ? " in job " + String(env["SLURM_JOB_ID"]) : ""})`,
    runPythonOnNodes: (script, args, nodeTimeoutMs) =>
      runThroughSrun({ ...options, exec, env }, script, args, nodeTimeoutMs),
  };
}

/** One srun step over the nodes asked for (or the allocation's): each node's run, and the down ones. */
async function runThroughSrun(
  options: SlurmTransportOptions & { exec: Exec; env: NodeJS.ProcessEnv },
  script: string,
  args: string[],
  nodeTimeoutMs: number,
): Promise<NodeRun[]> {
  const { exec, env, selection, python } = options;
  if (!insideAllocation(env)) await checkPartition(exec, selection);
  const plan = await planNodes(exec, selection, env);
  if (selection.containerImage && !(await pyxisAvailable(exec))) {
    throw new UserError(
      "--container-image needs the pyxis plugin, and this srun does not offer --container-image",
      "run without --container-image, or on a cluster with pyxis/enroot",
    );
  }
  const downRuns = plan.down.map(downRun);
  if (plan.ask !== null && plan.ask.length === 0) return downRuns;
  const limitSeconds = Math.ceil(nodeTimeoutMs / 1000);
  const nonce = newNonce();
  const command = nodeWrapperArgv(nonce, limitSeconds, [python, "-c", pythonBootstrap(script), ...args]);
  const argv = srunArgv(selection, plan.ask, insideAllocation(env), command);
  const grace = options.launchGraceSeconds ?? 30;
  const allocationWait = insideAllocation(env) ? 0 : (selection.allocationWaitSeconds ?? 60);
  const result = await exec("srun", argv, (limitSeconds + grace + allocationWait) * 1000);
  return [...stepRuns(result, nonce, plan.ask ?? [], limitSeconds), ...downRuns];
}

/** Each node's run from the step's frames; a step that ran on no node is one error line (exit 2). */
function stepRuns(result: RunResult, nonce: string, asked: string[], limitSeconds: number): NodeRun[] {
  // No node framed anything and srun failed: the step never started anywhere (a refused
  // allocation, a partition or node it would not use). One line, exit 2; not N "unreachable".
  if (!result.timedOut && result.code !== 0 && parseFrames(result.stdout, nonce, true).frames.size === 0) {
    throw new UserError(
      `srun ran on no node: ${srunRefusal(result)}`,
      "check --partition/--account/--nodes/--nodelist with `sinfo`; on a busy cluster use --submit",
    );
  }
  const runs = nodeRunsFromOutput(result.stdout, result.stderr, nonce, asked, limitSeconds, result.timedOut);
  if (runs.length === 0) {
    throw new UserError(
      `srun ran on no node: ${srunRefusal(result)}`,
      "try the same srun by hand: srun -N1 hostname",
    );
  }
  return runs;
}
