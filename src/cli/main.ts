#!/usr/bin/env node
/** gpuprep's entry point: dispatch to a subcommand, and turn any failure into one line and exit 2. */
import { UserError, errorMessage } from "../errors.js";
import { EXIT_TOOL_ERROR, type Command } from "./command.js";
import { TOOL_VERSION } from "../version.js";

/** Loaded lazily so `gpuprep kb` does not pay for the doctor's imports and the reverse. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  doctor: async () => (await import("./doctor.js")).doctorCommand,
  scan: async () => (await import("./scan.js")).scanCommand,
  kb: async () => (await import("./kb.js")).kbCommand,
  init: async () => (await import("./init.js")).initCommand,
  validate: async () => (await import("./validate.js")).validateCommand,
  fleet: async () => (await import("./fleet.js")).fleetCommand,
  memory: async () => (await import("./memory.js")).memoryCommand,
};

const SUMMARIES: Record<string, string> = {
  doctor: "what is wrong with PyTorch on this GPU, the evidence, and the exact fix",
  scan: "which GPU architectures the CUDA code in .so files covers",
  kb: "the compatibility knowledge: GPUs, CUDA, PyTorch builds, NGC images",
  init: "plan and write a setup (NGC container or native uv venv) for this project on a GPU",
  validate: "environment checks and GPU benchmarks against the hardware's peak",
  fleet: "doctor / validate across Slurm or Kubernetes nodes, drift between them",
  memory: "will a training step fit on the GPU, and the largest batch that does",
};

function usage(): string {
  const lines = Object.entries(SUMMARIES).map(([name, text]) => `  ${name.padEnd(10)}${text}`);
  return [
    `gpuprep ${TOOL_VERSION}: make PyTorch run correctly and fast on NVIDIA GPUs`,
    "",
    "usage: gpuprep <command> [flags]",
    "",
    ...lines,
    "",
    "Run `gpuprep <command> --help` for a command's flags.",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    console.log(TOOL_VERSION);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    throw new UserError(`unknown command "${name}"`, `commands: ${Object.keys(COMMANDS).join(", ")}`);
  }
  const command = await load();
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(command.help);
    return 0;
  }
  return command.run(rest);
}

export function reportFatal(error: unknown): number {
  if (error instanceof UserError) {
    process.stderr.write(`gpuprep: error: ${error.message}\n`);
    if (error.hint) process.stderr.write(`  hint: ${error.hint}\n`);
  } else {
    process.stderr.write(`gpuprep: internal error: ${errorMessage(error)}\n`);
    process.stderr.write("  hint: rerun with GPUPREP_DEBUG=1 for the stack trace, and report it\n");
    if (process.env.GPUPREP_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ""}\n`);
  }
  return EXIT_TOOL_ERROR;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportFatal(error);
  },
);
