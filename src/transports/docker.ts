/** The probe run inside a running container (docker exec) or a fresh container of an image (docker run). */
import { UserError } from "../errors.js";
import { CommandNotFoundError, runCommand, shellQuote } from "./spawn.js";
import { dockerOwnError } from "./tool-error.js";
import type { RunResult, Transport } from "./types.js";

const DOCKER = "docker";

export function containerCommand(container: string, python: string, args: string[]): string[] {
  return ["exec", "-i", container, python, "-", ...args];
}

export function imageCommand(image: string, python: string, args: string[], gpus: boolean): string[] {
  return ["run", "--rm", "-i", ...(gpus ? ["--gpus", "all"] : []), image, python, "-", ...args];
}

/**
 * `--gpus all` fails on hosts without the NVIDIA container toolkit, so ask for GPUs only when the
 * engine has the nvidia runtime registered or the toolkit's hook is installed.
 */
async function hostHasNvidiaRuntime(): Promise<boolean> {
  const info = await runCommand(DOCKER, ["info", "--format", "{{json .Runtimes}}"], {
    timeoutMs: 15000,
  }).catch(() => null);
  if (info?.code === 0 && /"nvidia"/.test(info.stdout)) return true;
  const hook = await runCommand("sh", ["-c", "command -v nvidia-container-runtime-hook nvidia-ctk"], {
    timeoutMs: 5000,
  }).catch(() => null);
  return hook?.code === 0 && hook.stdout.trim() !== "";
}

/**
 * Runs docker; when docker itself failed (daemon down, image not found, no such container), its
 * own first line becomes the error, with the command to try by hand, instead of whatever the
 * probe's parser would make of usage boilerplate.
 */
async function runDocker(
  args: string[],
  /** The script on stdin (runPython); undefined: stdin empty (runProgram). */
  input: string | undefined,
  timeoutMs: number,
  where: string,
  tryByHand: string,
): Promise<RunResult> {
  let result: RunResult;
  try {
    result = await runCommand(DOCKER, args, { timeoutMs, ...(input === undefined ? {} : { input }) });
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new UserError(
        "docker is not installed or not on PATH",
        "install Docker, or run gpuprep inside the container",
      );
    }
    throw error;
  }
  const own = dockerOwnError(result, args[0] === "run" ? "run" : "exec");
  if (own) throw new UserError(`docker could not start ${where}: ${own}`, `try it by hand: ${tryByHand}`);
  return result;
}

export function containerTransport(container: string, python = "python3"): Transport {
  return {
    kind: "container",
    ref: container,
    python,
    describe: () => `${python} in container ${container}`,
    runPython: (script, args, timeoutMs) =>
      runDocker(
        containerCommand(container, python, args),
        script,
        timeoutMs,
        `${python} in container ${container}`,
        `docker exec ${shellQuote(container)} ${shellQuote(python)} -V`,
      ),
    runProgram: (command, args, timeoutMs) =>
      runDocker(
        ["exec", container, command, ...args],
        undefined,
        timeoutMs,
        `${command} in container ${container}`,
        `docker exec ${shellQuote(container)} ${shellQuote(command)}`,
      ),
  };
}

export function imageTransport(image: string, python = "python3", gpus?: boolean): Transport {
  return {
    kind: "image",
    ref: image,
    python,
    describe: () => `${python} in a new container of image ${image}`,
    runPython: async (script, args, timeoutMs) =>
      runDocker(
        imageCommand(image, python, args, gpus ?? (await hostHasNvidiaRuntime())),
        script,
        timeoutMs,
        `${python} in a new container of image ${image}`,
        `docker run --rm ${shellQuote(image)} ${shellQuote(python)} -V`,
      ),
    runProgram: async (command, args, timeoutMs) =>
      runDocker(
        [
          "run",
          "--rm",
          ...((gpus ?? (await hostHasNvidiaRuntime())) ? ["--gpus", "all"] : []),
          image,
          command,
          ...args,
        ],
        undefined,
        timeoutMs,
        `${command} in a new container of image ${image}`,
        `docker run --rm ${shellQuote(image)} ${shellQuote(command)}`,
      ),
  };
}
