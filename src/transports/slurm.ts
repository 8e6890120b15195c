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
import { frameRunResult, newNonce, nodeWrapperArgv, parseFrames, pythonBootstrap } from "./node-frame.js";

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
  const args = ["--label", "--kill-on-bad-exit=0", "--job-name=gpuprep-fleet"];
  // Outside an allocation srun would queue forever on a busy cluster; --submit is for that.
  if (!insideAllocation) args.push(`--immediate=${selection.allocationWaitSeconds ?? 60}`);
  return [...args, ...stepOptions(selection, nodes), ...nodeCommand];
}

export interface SlurmTransportOptions {
  selection: SlurmSelection;
  python: string;
  env?: NodeJS.ProcessEnv;
  exec?: Exec;
  /** Extra seconds beyond the per-node limit for srun to launch and return the frames. */
  launchGraceSeconds?: number;
}

export function insideAllocation(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env["SLURM_JOB_ID"] ?? env["SLURM_JOBID"]);
}

/** Which nodes to ask and which to report down without asking. */
export async function planNodes(
  exec: Exec,
  selection: SlurmSelection,
  env: NodeJS.ProcessEnv,
): Promise<{ ask: string[] | null; down: SlurmNode[] }> {
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
  const down = known.filter((n) => !nodeIsAvailable(n));
  const ask = known.filter(nodeIsAvailable).map((n) => n.name);
  // --nodes N: Slurm picks N among the responsive nodes (or refuses); down ones are still reported.
  if (selection.nodes !== undefined && !selection.nodelist) return { ask: null, down };
  return { ask, down };
}

function downRun(node: SlurmNode): NodeRun {
  return {
    node: node.name,
    state: "down",
    reason: `Slurm reports it ${node.state}${node.reason ? ` (${node.reason})` : ""}; not asked`,
    result: null,
    durationMs: null,
  };
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
    if (frame.failure) {
      runs.set(node, {
        node,
        state: "unreachable",
        reason: `the node wrapper failed: ${frame.failure}`,
        result: null,
        durationMs: null,
      });
    } else if (!frame.complete || frame.exitCode === null) {
      runs.set(node, {
        node,
        state: "hung",
        reason: carrierKilled
          ? `started but sent no result within the ${limitSeconds}s per-node limit`
          : "its output was cut off before the end",
        result: null,
        durationMs: null,
      });
    } else if (frame.decodeError) {
      runs.set(node, {
        node,
        state: "ran",
        reason: frame.decodeError,
        result: {
          stdout: "",
          stderr: frame.decodeError,
          code: frame.exitCode,
          signal: null,
          timedOut: false,
        },
        durationMs: frame.durationMs,
      });
    } else {
      const result = frameRunResult(frame, limitSeconds);
      runs.set(node, {
        node,
        state: result.timedOut ? "hung" : "ran",
        reason: result.timedOut ? `killed at the ${limitSeconds}s per-node limit` : null,
        result,
        durationMs: frame.durationMs,
      });
    }
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

/** srun refused the whole step: no frame at all and an allocation error. */
function allocationRefused(result: RunResult): string | null {
  const text = result.stderr + "\n" + result.stdout;
  const match =
    /(Unable to allocate resources[^\n]*|invalid (partition|account)[^\n]*|Invalid (account|partition|qos)[^\n]*|Job violates accounting[^\n]*|Requested node configuration is not available[^\n]*)/i.exec(
      text,
    );
  return match ? match[0].trim() : null;
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
    async runPythonOnNodes(script, args, nodeTimeoutMs) {
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
      const runs = nodeRunsFromOutput(
        result.stdout,
        result.stderr,
        nonce,
        plan.ask ?? [],
        limitSeconds,
        result.timedOut,
      );
      if (runs.length === 0) {
        const refused = allocationRefused(result);
        throw new UserError(
          `srun ran on no node: ${refused ?? (firstLine(result.stderr) || `exit ${String(result.code)}`)}`,
          refused
            ? "check --partition/--account/--nodes with `sinfo`; on a busy cluster use --submit"
            : "try the same srun by hand: srun -N1 hostname",
        );
      }
      return [...runs, ...downRuns];
    },
  };
}
