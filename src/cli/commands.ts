/**
 * Every command: its one-line summary (written here once, for `gpuprep --help`) and its module,
 * loaded lazily so `gpuprep kb` does not pay for the doctor's imports, nor `gpuprep --help` for
 * any command's (loading all seven took it from 0.4 s to 1.2 s).
 */
import type { CommandEntry } from "./command.js";

export const COMMANDS: Record<string, CommandEntry> = {
  doctor: {
    summary: "what is wrong with PyTorch on this GPU, the evidence, and the exact fix",
    load: async () => (await import("./doctor.js")).doctorCommand,
  },
  scan: {
    summary: "which GPU architectures the CUDA code in .so files covers",
    load: async () => (await import("./scan.js")).scanCommand,
  },
  kb: {
    summary: "the compatibility knowledge: GPUs, CUDA, PyTorch builds, NGC images",
    load: async () => (await import("./kb.js")).kbCommand,
  },
  init: {
    summary: "plan and write a setup (NGC container or native uv venv) for this project on a GPU",
    load: async () => (await import("./init.js")).initCommand,
  },
  validate: {
    summary: "environment checks and GPU benchmarks against the hardware's peak",
    load: async () => (await import("./validate.js")).validateCommand,
  },
  fleet: {
    summary: "doctor / validate across Slurm or Kubernetes nodes, drift between them",
    load: async () => (await import("./fleet.js")).fleetCommand,
  },
  memory: {
    summary: "will a training step fit on the GPU, and the largest batch that does",
    load: async () => (await import("./memory.js")).memoryCommand,
  },
  completion: {
    summary: "the shell completion script for bash, zsh or fish",
    // Given the table, so completion.ts does not import this module back.
    load: async () => (await import("./completion.js")).completionCommandFor(COMMANDS),
  },
};
