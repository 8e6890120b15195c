/** The probe run by an interpreter on this machine (`--python PATH`, the active venv, or python3). */
import { UserError } from "../errors.js";
import { CommandNotFoundError, runCommand } from "./spawn.js";
import type { PythonRunOptions, RunResult, Transport } from "./types.js";

export function localTransport(python: string): Transport {
  return {
    kind: "local",
    ref: null,
    python,
    describe: () => `${python} on this machine`,
    async runPython(
      script: string,
      args: string[],
      timeoutMs: number,
      options: PythonRunOptions = {},
    ): Promise<RunResult> {
      try {
        // Payloads import the user's packages, which may start daemons of their own: reaped too.
        return await runCommand(python, ["-", ...args], {
          input: script,
          timeoutMs,
          reapDaemons: true,
          ...(options.secret === undefined ? {} : { secret: options.secret }),
        });
      } catch (error) {
        if (error instanceof CommandNotFoundError) {
          throw new UserError(
            `cannot run ${python}: no such interpreter`,
            "pass --python PATH to a Python >= 3.8 (for a venv: PATH/TO/venv/bin/python)",
          );
        }
        throw error;
      }
    },
    // A missing program is left to the caller: nvidia-smi absent is a fact, a missing
    // interpreter an error with the caller's own words.
    // The interpreter itself (validate's payload as a file) is reaped like runPython.
    runProgram: (command, args, timeoutMs) =>
      runCommand(command, args, { timeoutMs, ...(command === python ? { reapDaemons: true } : {}) }),
  };
}
