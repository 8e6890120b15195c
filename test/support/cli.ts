/** The built CLI, spawned as a user would run it: exit code, stdout and stderr. */
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: SpawnSyncOptions = {}): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    timeout: 120_000, // a hang ends as status null, which fails every exit-code check
    ...options,
    env: { ...process.env, NO_COLOR: "1", ...(options.env ?? {}) },
  });
  return { code: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** `command -v NAME` through a shell: where a test needs a real binary, it says which package has it. */
export function requireBinary(name: string, debianPackage: string): string {
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === "")
    throw new Error(`this test needs ${name}: apt-get install ${debianPackage}`);
  return path;
}

/** One word for `sh -c` (the CLI path inside `script -c` or a pipeline). */
export function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
