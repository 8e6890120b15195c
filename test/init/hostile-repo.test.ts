/**
 * Issue 12: a cloned repository can plant symbolic links where init writes. A real `git clone`
 * of a repository that commits such links, then init with and without --force: refused with one
 * line, nothing written outside the project (or through the links).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInit } from "./helpers.js";

const H100 = ["--target", "h100", "--driver", "580.95.05", "--strategy", "container"];

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "ignore" });
}

/** A repository whose commit holds `links` (name -> target), cloned; returns the clone. */
function clonedRepo(root: string, links: Record<string, string>): string {
  const origin = join(root, "origin");
  mkdirSync(origin);
  git(origin, "init", "-q");
  writeFileSync(join(origin, "requirements.txt"), "torch\n");
  for (const [name, target] of Object.entries(links)) symlinkSync(target, join(origin, name));
  git(origin, "add", "-A");
  git(origin, "commit", "-qm", "planted");
  git(root, "clone", "-q", origin, "clone");
  return join(root, "clone");
}

for (const [name, link, target, refused] of [
  ["a dangling Dockerfile link", "Dockerfile", "../outside/Dockerfile", /Dockerfile is a symbolic link/],
  ["a scripts/ link", "scripts", "../outside", /scripts is a symbolic link/],
  ["a .gpuprep/ link", ".gpuprep", "../outside", /\.gpuprep is a symbolic link/],
  [
    "a .dockerignore link to a file outside",
    ".dockerignore",
    "../outside/victim",
    /\.dockerignore is a symbolic link/,
  ],
] as const) {
  test(`a cloned repository with ${name}: init refuses, --force included`, () => {
    for (const force of [[], ["--force"]]) {
      const root = mkdtempSync(join(tmpdir(), "gpuprep-hostile-repo-"));
      mkdirSync(join(root, "outside"));
      writeFileSync(join(root, "outside", "victim"), "precious\n");
      const clone = clonedRepo(root, { [link]: target });
      const result = runInit(["--project", clone, ...H100, ...force]);
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(result.stderr, refused);
      assert.equal(result.stderr.trimEnd().split("\n").length, 2, result.stderr); // error + hint
      assert.deepEqual(readdirSync(join(root, "outside")), ["victim"]);
      assert.equal(readFileSync(join(root, "outside", "victim"), "utf8"), "precious\n");
    }
  });
}

test("two inits at once: one writes, the other stops with a clear line (the lock)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-lock-"));
  writeFileSync(join(dir, "requirements.txt"), "torch\n");
  // Hold the lock from a live process, as a running init does.
  mkdirSync(join(dir, ".gpuprep"));
  const holder = spawn("sleep", ["30"]);
  try {
    writeFileSync(join(dir, ".gpuprep", "lock"), `${holder.pid}\n`);
    const blocked = runInit(["--project", dir, ...H100]);
    assert.equal(blocked.code, 2);
    assert.match(
      blocked.stderr,
      new RegExp(`another gpuprep \\(pid ${holder.pid}\\) is writing this project`),
    );
    assert.equal(existsSync(join(dir, "Dockerfile")), false);
  } finally {
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
  }
  // Its holder is gone: the lock is stale and the next init proceeds.
  const next = runInit(["--project", dir, ...H100]);
  assert.equal(next.code, 0, next.stderr);
  assert.ok(existsSync(join(dir, "Dockerfile")));
  assert.equal(existsSync(join(dir, ".gpuprep", "lock")), false);
});
