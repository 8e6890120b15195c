/** The probe run on another host: `ssh HOST python3 - ARGS` with the probe on stdin. */
import { UserError } from "../errors.js";
import { CommandNotFoundError, runCommand, shellQuote } from "./spawn.js";
import type { RunResult, Transport } from "./types.js";
import { sshOwnError } from "./tool-error.js";

/** BatchMode: never stop to ask for a password; a probe run must not hang on a prompt. */
export function sshCommand(host: string, python: string, args: string[]): string[] {
  return sshArgv(host, [python, "-", ...args]);
}

/** ssh's own arguments for one remote command, quoted for the remote shell. */
function sshArgv(host: string, remote: string[]): string[] {
  return ["-o", "BatchMode=yes", "--", host, remote.map(shellQuote).join(" ")];
}

/** Runs ssh; its own failure (name, connection, key) becomes a one-line error in its own words. */
async function runSsh(host: string, argv: string[], input: string | undefined, timeoutMs: number) {
  let result: RunResult;
  try {
    result = await runCommand("ssh", argv, { timeoutMs, ...(input === undefined ? {} : { input }) });
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new UserError("ssh is not installed or not on PATH", "install an OpenSSH client");
    }
    throw error;
  }
  const own = sshOwnError(result);
  if (own)
    throw new UserError(
      `ssh could not reach ${host}: ${own}`,
      `try it by hand: ssh -o BatchMode=yes ${shellQuote(host)} true (it must log in without a prompt)`,
    );
  return result;
}

export function sshTransport(host: string, python = "python3"): Transport {
  return {
    kind: "ssh",
    ref: host,
    python,
    describe: () => `${python} on ${host} (ssh)`,
    runPython: (script, args, timeoutMs) => runSsh(host, sshCommand(host, python, args), script, timeoutMs),
    runProgram: (command, args, timeoutMs) =>
      runSsh(host, sshArgv(host, [command, ...args]), undefined, timeoutMs),
  };
}
