/* eslint-disable no-control-regex -- this test is about escape sequences */
/**
 * --color auto|always|never beside NO_COLOR and FORCE_COLOR (issue 29 item 3), and init --dry-run's
 * diffs in colour, run as a user runs them (stdout a pipe, so auto means no colour unless the
 * environment asks). The flag wins over the environment; what a project file carries into the diff
 * is still sanitised, while our colours stay.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli } from "../support/cli.js";

const SGR = /\u001b\[\d+m/;
const PROJECT = `[project]
name = "demo"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["torch>=2.4"]
`;
const SETTINGS = 'target = "dgx-spark"\ndriver = 580\nstrategy = "native"\n';

function projectDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-color-"));
  writeFileSync(join(dir, "pyproject.toml"), PROJECT);
  writeFileSync(join(dir, "gpuprep.toml"), SETTINGS);
  return dir;
}

/**
 * gpuprep's stdout with NO_COLOR and FORCE_COLOR unset unless `env` sets them (an empty
 * FORCE_COLOR forces colour, as in Node itself, so they are left out, not emptied).
 */
function stdoutOf(args: string[], env: Record<string, string>, cwd: string): string {
  const { NO_COLOR: _no, FORCE_COLOR: _force, ...inherited } = process.env;
  const run = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...inherited, ...env },
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

function dryRun(dir: string, args: string[], env: Record<string, string> = {}): string {
  return stdoutOf(["init", "--dry-run", ...args], env, dir);
}

test("the flag wins over NO_COLOR and FORCE_COLOR; auto follows them; a pipe alone gets no colour", () => {
  const dir = projectDir();
  const cases: [args: string[], env: Record<string, string>, coloured: boolean][] = [
    [[], {}, false],
    [[], { FORCE_COLOR: "1" }, true],
    [[], { NO_COLOR: "1", FORCE_COLOR: "1" }, false],
    [["--color", "auto"], { FORCE_COLOR: "1" }, true],
    [["--color", "always"], {}, true],
    [["--color", "always"], { NO_COLOR: "1" }, true],
    [["--color=never"], { FORCE_COLOR: "1" }, false],
    [["--color", "never"], {}, false],
  ];
  for (const [args, env, coloured] of cases) {
    const out = dryRun(dir, args, env);
    assert.equal(SGR.test(out), coloured, `${args.join(" ")} ${JSON.stringify(env)}`);
  }
  const before = stdoutOf(["--color", "always", "kb", "gpu", "h100"], { NO_COLOR: "1" }, dir);
  assert.match(before, SGR, "--color before the command counts too");
});

test("--color takes one of auto, always, never: anything else is one line and exit 2", () => {
  for (const args of [
    ["init", "--color", "blue"],
    ["--color=yes", "kb", "gpu", "h100"],
  ]) {
    const run = runCli(args, { cwd: projectDir() });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /^gpuprep: error: (init: )?--color "(blue|yes)" is not one of auto, always, never\n {2}hint: /,
    );
  }
});

test("init --dry-run colours its diffs as git does: headers bold, hunks blue, added green, removed red", () => {
  const dir = projectDir();
  assert.equal(runCli(["init"], { cwd: dir }).code, 0);
  writeFileSync(join(dir, "gpuprep.toml"), `${SETTINGS}python = "3.12"\n`);
  const out = dryRun(dir, ["--color", "always"]);
  const lines = out.split("\n");
  assert.ok(lines.includes("\u001b[1m--- a/SETUP.md\u001b[22m"), out);
  assert.ok(lines.includes("\u001b[1m+++ b/SETUP.md\u001b[22m"));
  assert.ok(lines.some((l) => /^\u001b\[34m@@ -\d+,\d+ \+\d+,\d+ @@\u001b\[39m$/.test(l)));
  assert.ok(
    lines.some((l) => /^\u001b\[31m-.*3\.14.*\u001b\[39m$/.test(l)),
    "the removed Python 3.14 line, red",
  );
  assert.ok(
    lines.some((l) => /^\u001b\[32m\+.*3\.12.*\u001b\[39m$/.test(l)),
    "the added Python 3.12 line, green",
  );
  const plain = dryRun(dir, ["--color", "never"]);
  assert.equal(plain, out.replace(/\u001b\[\d+m/g, ""), "the same text, colour aside");
});

test("a project file's escape sequences shown in a coloured diff are removed; our colours stay", () => {
  const dir = projectDir();
  // A SETUP.md gpuprep did not write: the dry run shows it replaced, its lines as removed ones.
  writeFileSync(join(dir, "SETUP.md"), "my notes \u001b]0;pwned\u0007 and \u001b[2J\u001b[5A here\n");
  const out = dryRun(dir, ["--color", "always"]);
  assert.doesNotMatch(out, /\u001b\]|\u0007|\u001b\[2J|\u001b\[5A/);
  assert.ok(out.split("\n").includes("\u001b[31m-my notes  and  here\u001b[39m"), out);
  assert.match(out, /\u001b\[32m\+/);
});
