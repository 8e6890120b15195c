/**
 * Stand-ins for the tools the generated scripts call (docker, uv, nvidia-smi): each records its
 * argv as one JSON line and does the least the script needs to go on (uv makes .venv/bin/python,
 * nvidia-smi prints a driver version). They live outside the repository, so node runs them as
 * CommonJS. Running the real script against them shows what it would run, argument by argument.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Call {
  tool: string;
  argv: string[];
}

const RECORDER = (tool: string, extra: string) => `#!${process.execPath}
const fs = require("node:fs");
const path = require("node:path");
fs.appendFileSync(process.env.STANDIN_LOG, JSON.stringify({ tool: ${JSON.stringify(tool)}, argv: process.argv.slice(2) }) + "\\n");
${extra}
`;

const UV_EXTRA = `
const args = process.argv.slice(2);
if (args[0] === "venv" || args[0] === "sync") {
  fs.mkdirSync(".venv/bin", { recursive: true });
  fs.writeFileSync(".venv/bin/python", "#!/bin/sh\\nexit 0\\n", { mode: 0o755 });
}
`;

export interface StandIns {
  bin: string;
  log: string;
  /** A fresh directory the scripts run from (a planted relative `touch` would land here or in the project). */
  cwd: string;
  calls(): Call[];
}

/** @param tools which stand-ins to provide (leave nvidia-smi out to act as a machine without one). */
export function makeStandIns(tools: Array<"docker" | "uv" | "nvidia-smi">): StandIns {
  const root = mkdtempSync(join(tmpdir(), "gpuprep-standins-"));
  const bin = join(root, "bin");
  const cwd = join(root, "cwd");
  mkdirSync(bin);
  mkdirSync(cwd);
  const log = join(root, "calls.jsonl");
  for (const tool of tools) {
    const extra =
      tool === "uv" ? UV_EXTRA : tool === "nvidia-smi" ? 'process.stdout.write("580.95.05\\n");' : "";
    writeFileSync(join(bin, tool), RECORDER(tool, extra));
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
