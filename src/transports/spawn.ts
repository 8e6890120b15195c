/** Spawns a command, feeds it stdin, collects output, kills its whole process group at the deadline. */
import { spawn } from "node:child_process";
import type { RunResult } from "./types.js";

export class CommandNotFoundError extends Error {
  constructor(readonly command: string) {
    super(`${command}: not found`);
  }
}

export function runWithInput(
  command: string,
  args: string[],
  input: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // detached: the child leads its own process group, so a timeout kills wrappers and their children too.
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true, env });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdin.on("error", () => {}); // EPIPE when the interpreter exits before reading the script
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error.code === "ENOENT" || error.code === "EACCES" ? new CommandNotFoundError(command) : error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        code,
        signal,
        timedOut,
      });
    });
    child.stdin.end(input);
  });
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
