/** The probe run on another host: `ssh HOST python3 - ARGS` with the probe on stdin. */
import { UserError } from "../errors.js";
import { CommandNotFoundError, runWithInput, shellQuote } from "./spawn.js";
import type { Transport } from "./types.js";
import { sshOwnError } from "./tool-error.js";

/** BatchMode: never stop to ask for a password; a probe run must not hang on a prompt. */
export function sshCommand(host: string, python: string, args: string[]): string[] {
  return ["-o", "BatchMode=yes", "--", host, [python, "-", ...args].map(shellQuote).join(" ")];
}

export function sshTransport(host: string, python = "python3"): Transport {
  return {
    kind: "ssh",
    ref: host,
    python,
    describe: () => `${python} on ${host} (ssh)`,
    async runPython(script, args, timeoutMs) {
      let result;
      try {
        result = await runWithInput("ssh", sshCommand(host, python, args), script, timeoutMs);
      } catch (error) {
        if (error instanceof CommandNotFoundError) {
          throw new UserError("ssh is not installed or not on PATH", "install an OpenSSH client");
        }
        throw error;
      }
      // ssh's own failure (name, connection, key) in its own words, not as the probe's.
      const own = sshOwnError(result);
      if (own)
        throw new UserError(
          `ssh could not reach ${host}: ${own}`,
          `try it by hand: ssh -o BatchMode=yes ${shellQuote(host)} true (it must log in without a prompt)`,
        );
      return result;
    },
  };
}
