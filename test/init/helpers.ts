/** Shared by the init suites: where the examples are, and running the built CLI on a copy of one. */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const examplesDir = join(repoRoot, "examples");
const cli = join(repoRoot, "dist", "src", "cli", "main.js");
const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-init-cache-")); // no KB overlay: packaged data only

/** The examples with a golden case: a gpuprep-args file and the expected/ files it produces. (The seed
 * examples without one are run by stories.test.ts only, until a run of them passes.) */
export function exampleNames(): string[] {
  return readdirSync(examplesDir).filter(
    (name) =>
      statSync(join(examplesDir, name)).isDirectory() && existsSync(join(examplesDir, name, "gpuprep-args")),
  );
}

/** The example's own project files (everything but expected/ and gpuprep-args), copied to a fresh dir of the same name. */
export function copyExample(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-init-")), name);
  cpSync(join(examplesDir, name), dir, {
    recursive: true,
    filter: (src) => {
      const rel = relative(join(examplesDir, name), src);
      return rel !== "expected" && !rel.startsWith(`expected/`) && rel !== "gpuprep-args";
    },
  });
  return dir;
}

export function exampleArgs(name: string): string[] {
  return readFileSync(join(examplesDir, name, "gpuprep-args"), "utf8")
    .trim()
    .split(/\s+/);
}

export function runInit(args: string[], cwd = repoRoot) {
  const result = spawnSync(process.execPath, [cli, "init", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file under dir, as paths relative to it. */
export function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path, base) : [relative(base, path)];
  });
}

/**
 * init's text with its wrapped lines joined again (continuation lines are indented 4 or more,
 * list items under a reason start with "- "), so a test can match a whole reason or conflict.
 */
export function unwrapped(text: string): string {
  return text.replace(/\n {4,}(?!- |why: |source: )/g, " ");
}
