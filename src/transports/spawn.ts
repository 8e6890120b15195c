/**
 * The one place gpuprep starts a process. Every child leads its own process group, is killed with
 * SIGKILL to the whole group at its limit, and the promise settles when the child exits, not when
 * its pipes close: a daemon that inherited stdout (an extension's background server, `sleep &` in
 * a wrapper) must not keep gpuprep waiting. Output is capped so a flood cannot grow memory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import type { RunResult } from "./types.js";
import { logVerbose } from "../util/console-status.js";

export class CommandNotFoundError extends Error {
  constructor(readonly command: string) {
    super(`${command}: not found`);
  }
}

/** A probe result is 50-200 KB and a validate payload less; 8 MB leaves room for huge environments. */
const STDOUT_CAP_BYTES = 8 * 1024 * 1024;
const STDERR_CAP_BYTES = 1024 * 1024;
/** After the child exits, how long its pipes may take to deliver what is still buffered. */
const DRAIN_GRACE_MS = 300;
/** After SIGKILL, how long to wait for 'exit' before giving up on a process stuck in the kernel. */
const KILL_GRACE_MS = 3000;

interface RunOptions {
  timeoutMs: number;
  /** Written to stdin, then stdin is closed; without it stdin is /dev/null. */
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stdoutCapBytes?: number;
  stderrCapBytes?: number;
  /**
   * Also kill, when the run ends, every process that inherited this run's mark (see reapMarked):
   * for interpreters running payloads, whose imports (an extension, a torch plugin) may start a
   * daemon in a session of its own (setsid, start_new_session), out of reach of the group kill.
   */
  reapDaemons?: boolean;
  /** Written to a pipe at the child's fd 3, which is then closed at our end (transports/payload-frame.ts). */
  secret?: string;
}

/** The environment variable that marks a run's processes; the value is random per run. */
const RUN_MARK_VARIABLE = "GPUPREP_RUN_MARK";

/**
 * SIGKILL to every process whose environment holds `NAME=mark`, found in /proc/PID/environ (Linux;
 * elsewhere nothing is found). A daemon that left the process group and session still carries the
 * environment it was started with, unless it cleared it, which setsid(1), daemon(3), Python's
 * start_new_session and double forks do not do. Rounds repeat while some are found, since a
 * daemon may fork again. Costs one read per process of /proc: ~6 ms for 90 processes here.
 */
function reapMarked(mark: string): number {
  const needle = Buffer.from(`${RUN_MARK_VARIABLE}=${mark}\0`);
  let killed = 0;
  for (let round = 0; round < 5; round++) {
    let found = 0;
    let pids: string[];
    try {
      pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
    } catch {
      return killed;
    }
    for (const pid of pids) {
      let environ: Buffer;
      try {
        environ = readFileSync(`/proc/${pid}/environ`);
      } catch {
        continue; // gone, or another user's
      }
      if (environ.indexOf(needle) === -1) continue;
      try {
        process.kill(Number(pid), "SIGKILL");
        found++;
      } catch {
        // gone meanwhile
      }
    }
    killed += found;
    if (found === 0) break;
  }
  return killed;
}

/** Keeps the first `cap` bytes of a stream and counts the rest. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

/**
 * -v: what ran, as a shell would take it, how long it took, how it ended, and when it started
 * after gpuprep itself did (performance.now() counts from process start), which shows what runs
 * side by side and how long the tool spent before starting it.
 */
function logRun(command: string, args: string[], startedAt: number, outcome: string): void {
  const ms = Math.round(performance.now() - startedAt);
  const shown = [command, ...args].map(shownWord).join(" ");
  logVerbose(`ran ${shown} (${ms} ms, ${outcome}; started at +${Math.round(startedAt)} ms)`);
}

/** A word as -v shows it: shell-quoted; an inline script (`python -c '...'`) cut to its start. */
function shownWord(word: string): string {
  const firstLine = word.split("\n")[0] ?? "";
  if (firstLine === word && word.length <= MAX_SHOWN_WORD) return shellQuote(word);
  return `${shellQuote(firstLine.slice(0, MAX_SHOWN_WORD))}…`;
}
const MAX_SHOWN_WORD = 100;

export function runCommand(command: string, args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => new ChildRun(command, args, options, resolve, reject).start());
}

type ChildExit = { code: number | null; signal: string | null };

/** The child as runCommand starts it: in a process group of its own, marked where daemons are reaped. */
function spawnDetached(
  command: string,
  args: string[],
  options: RunOptions,
  mark: string | null,
): ChildProcess {
  const env = options.env ?? process.env;
  // detached: the child leads its own process group, so a kill reaches wrappers and their children.
  return spawn(command, args, {
    stdio: [
      options.input === undefined ? "ignore" : "pipe",
      "pipe",
      "pipe",
      ...(options.secret === undefined ? [] : (["pipe"] as const)),
    ],
    detached: true,
    env: mark === null ? env : { ...env, [RUN_MARK_VARIABLE]: mark },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
}

/**
 * One run of runCommand, from spawn to its one settlement: the child's exit (its pipes drained or
 * given DRAIN_GRACE_MS), its time limit (then KILL_GRACE_MS for the exit), or a failure to start.
 */
class ChildRun {
  private readonly startedAt = performance.now();
  private readonly mark: string | null;
  private readonly child: ChildProcess;
  private readonly stdout: CappedBuffer;
  private readonly stderr: CappedBuffer;
  private readonly pipes: Readable[];
  private openPipes: number;
  private timedOut = false;
  private settled = false;
  private exit: ChildExit | null = null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly options: RunOptions,
    private readonly resolve: (result: RunResult) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.mark = options.reapDaemons ? randomBytes(8).toString("hex") : null;
    this.child = spawnDetached(command, args, options, this.mark);
    this.stdout = new CappedBuffer(options.stdoutCapBytes ?? STDOUT_CAP_BYTES);
    this.stderr = new CappedBuffer(options.stderrCapBytes ?? STDERR_CAP_BYTES);
    this.pipes = [this.child.stdout, this.child.stderr].filter((p): p is Readable => p !== null);
    this.openPipes = this.pipes.length;
  }

  start(): void {
    const { child } = this;
    child.stdout?.on("data", (chunk: Buffer) => this.stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.stderr.push(chunk));
    for (const pipe of this.pipes) {
      pipe.on("error", () => {});
      pipe.on("close", () => {
        this.openPipes -= 1;
        if (this.openPipes === 0 && this.exit !== null) this.finish();
      });
    }
    child.stdin?.on("error", () => {}); // EPIPE when the interpreter exits before reading the script
    this.later(this.options.timeoutMs, () => {
      this.timedOut = true;
      killGroup(child.pid);
      this.later(KILL_GRACE_MS, () => this.finish());
    });
    child.on("error", (error: NodeJS.ErrnoException) => this.fail(error));
    child.on("exit", (code, signal) => {
      this.exit = { code, signal };
      if (this.openPipes === 0) this.finish();
      else this.later(DRAIN_GRACE_MS, () => this.finish());
    });
    child.stdin?.end(this.options.input);
    const secretPipe = this.options.secret === undefined ? null : (child.stdio[3] as Writable | null);
    secretPipe?.on("error", () => {});
    secretPipe?.end(this.options.secret);
  }

  private later(ms: number, fn: () => void): void {
    this.timers.push(setTimeout(fn, ms));
  }

  /** Settles once; clears the timers and lets go of the pipes. False when already settled. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    for (const timer of this.timers) clearTimeout(timer);
    // Whatever still holds the pipes (a daemon) is not waited for.
    for (const pipe of this.pipes) pipe.destroy();
    return true;
  }

  private finish(): void {
    if (!this.settle()) return;
    this.child.stdin?.destroy();
    // A child that exited may have left processes in its group; none of them is ours to keep,
    // nor any that left the group but carry this run's mark.
    killGroup(this.child.pid);
    if (this.mark !== null) reapMarked(this.mark);
    logRun(this.command, this.args, this.startedAt, this.endedAs());
    this.resolve(this.result());
  }

  /** How the run ended, for -v. */
  private endedAs(): string {
    if (this.timedOut) return "killed at its time limit";
    return this.exit?.signal ? `signal ${this.exit.signal}` : `exit ${this.exit?.code}`;
  }

  private result(): RunResult {
    const { exit, timedOut, stdout, stderr } = this;
    const truncated = stdout.truncated || stderr.truncated;
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      code: exit?.code ?? null,
      signal: exit?.signal ?? (timedOut ? "SIGKILL" : null),
      timedOut,
      ...(truncated ? { truncated: { stdout: stdout.truncated, stderr: stderr.truncated } } : {}),
    };
  }

  private fail(error: NodeJS.ErrnoException): void {
    if (!this.settle()) return;
    logRun(this.command, this.args, this.startedAt, `could not start: ${error.code ?? error.message}`);
    this.reject(
      error.code === "ENOENT" || error.code === "EACCES" ? new CommandNotFoundError(this.command) : error,
    );
  }
}

/** The older name, kept for the transports: `command args` with `input` on stdin. */
export function runWithInput(
  command: string,
  args: string[],
  input: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunResult> {
  return runCommand(command, args, { input, timeoutMs, env });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Quotes one word for a POSIX shell (ssh joins its arguments into a remote shell command). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
