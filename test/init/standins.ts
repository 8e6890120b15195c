/**
 * Stand-ins for the tools the generated scripts call (docker, uv, pixi, conda, git, nvidia-smi):
 * each records its argv, its working directory and the build-relevant environment (TORCH_*,
 * TRITON_*, UV_*, PIP_*, CUDA_*, MAX_JOBS ...) as one JSON line, and does the least the script needs
 * to go on (uv makes .venv/bin/python, pixi makes .pixi/envs/default/bin/python, nvidia-smi prints a
 * driver version). They live outside the repository, so node runs them as CommonJS. Running the real
 * script against them shows what it would run, argument by argument.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Call {
  tool: string;
  argv: string[];
  /** Where it ran (a relative path in argv means something only with it). */
  cwd: string;
  /** The variables a build or an installer reads, as the tool saw them. */
  env: Record<string, string>;
}

/** Variables worth recording: what steers a source build, uv, pip, pixi or conda. */
const RECORDED_ENV =
  "^(TORCH_|TRITON_|UV_|PIP_|PIXI_|CONDA_|CUDA_|CUDACXX$|MAX_JOBS$|NVCC_|CCACHE_|CC$|CXX$)";

const RECORDER = (tool: string, extra: string) => `#!${process.execPath}
const fs = require("node:fs");
const path = require("node:path");
const recorded = new RegExp(${JSON.stringify(RECORDED_ENV)});
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => recorded.test(name)));
fs.appendFileSync(process.env.STANDIN_LOG, JSON.stringify({ tool: ${JSON.stringify(tool)}, argv: process.argv.slice(2), cwd: process.cwd(), env }) + "\\n");
${extra}
`;

const UV_EXTRA = `
const args = process.argv.slice(2);
if (args[0] === "venv" || args[0] === "sync") {
  fs.mkdirSync(".venv/bin", { recursive: true });
  fs.writeFileSync(".venv/bin/python", "#!/bin/sh\\nexit 0\\n", { mode: 0o755 });
}
`;

const PIXI_EXTRA = `
if (process.argv[2] === "install") {
  fs.mkdirSync(".pixi/envs/default/bin", { recursive: true });
  fs.writeFileSync(".pixi/envs/default/bin/python", "#!/bin/sh\\nexit 0\\n", { mode: 0o755 });
}
`;

export type StandInTool = "docker" | "uv" | "nvidia-smi" | "pixi" | "conda" | "mamba" | "git";

const EXTRA: Partial<Record<StandInTool, string>> = {
  uv: UV_EXTRA,
  pixi: PIXI_EXTRA,
  "nvidia-smi": 'process.stdout.write("580.95.05\\n");',
};

export interface StandIns {
  bin: string;
  log: string;
  /** A fresh directory the scripts run from (a planted relative `touch` would land here or in the project). */
  cwd: string;
  calls(): Call[];
}

/** @param tools which stand-ins to provide (leave nvidia-smi out to act as a machine without one). */
export function makeStandIns(tools: StandInTool[]): StandIns {
  const root = mkdtempSync(join(tmpdir(), "gpuprep-standins-"));
  const bin = join(root, "bin");
  const cwd = join(root, "cwd");
  mkdirSync(bin);
  mkdirSync(cwd);
  const log = join(root, "calls.jsonl");
  for (const tool of tools) {
    writeFileSync(join(bin, tool), RECORDER(tool, EXTRA[tool] ?? ""));
    chmodSync(join(bin, tool), 0o755);
  }
  return {
    bin,
    log,
    cwd,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as Call)
        : [],
  };
}

/** Runs a generated script with the stand-ins first on PATH (and only system tools after them). */
export function runScript(
  script: string,
  standIns: StandIns,
  args: string[] = [],
  env: Record<string, string> = {},
) {
  const result = spawnSync("bash", [script, ...args], {
    cwd: standIns.cwd,
    encoding: "utf8",
    env: {
      PATH: `${standIns.bin}:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin`,
      HOME: join(standIns.cwd, "home"),
      STANDIN_LOG: standIns.log,
      ...env,
    },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
