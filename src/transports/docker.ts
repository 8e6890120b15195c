/** The probe run inside a running container (docker exec) or a fresh container of an image (docker run). */
import { UserError } from "../errors.js";
import { CommandNotFoundError, runCommand, runWithInput } from "./spawn.js";
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
export async function hostHasNvidiaRuntime(): Promise<boolean> {
  const info = await runCommand(DOCKER, ["info", "--format", "{{json .Runtimes}}"], {
    timeoutMs: 15000,
  }).catch(() => null);
  if (info?.code === 0 && /"nvidia"/.test(info.stdout)) return true;
  const hook = await runCommand("sh", ["-c", "command -v nvidia-container-runtime-hook nvidia-ctk"], {
    timeoutMs: 5000,
  }).catch(() => null);
  return hook?.code === 0 && hook.stdout.trim() !== "";
}

async function runDocker(args: string[], script: string, timeoutMs: number): Promise<RunResult> {
  try {
    return await runWithInput(DOCKER, args, script, timeoutMs);
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new UserError(
        "docker is not installed or not on PATH",
        "install Docker, or run gpuprep inside the container",
      );
    }
    throw error;
  }
}

export function containerTransport(container: string, python = "python3"): Transport {
  return {
    kind: "container",
    ref: container,
    python,
    describe: () => `${python} in container ${container}`,
    runPython: (script, args, timeoutMs) =>
      runDocker(containerCommand(container, python, args), script, timeoutMs),
  };
}

export function imageTransport(image: string, python = "python3", gpus?: boolean): Transport {
  return {
    kind: "image",
    ref: image,
    python,
    describe: () => `${python} in a new container of image ${image}`,
    runPython: async (script, args, timeoutMs) =>
      runDocker(imageCommand(image, python, args, gpus ?? (await hostHasNvidiaRuntime())), script, timeoutMs),
  };
}
