/**
 * `gpuprep fleet check --node --baseline FILE` on this machine with Debian's python3 and torch,
 * as LBNL NHC's check_cmd_output or a node-problem-detector custom plugin runs it: one line on
 * stdout, exit 0 when the node is the baseline, 1 on drift, 2 when it cannot check.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { needs, PYTHON3_TORCH } from "../support/needs.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-check-"));

function gpuprep(args: string[]) {
  return spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 120_000, cwd: work });
}

test("this node against its own snapshot: OK, exit 0; against other values: FAIL with what differs, exit 1", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const snapshot = join(work, "good.json");
  const saved = gpuprep(["doctor", "--python", "/usr/bin/python3", "--save", snapshot]);
  assert.ok(saved.status === 0 || saved.status === 1, saved.stderr);
  const ok = gpuprep(["fleet", "check", "--node", "--python", "/usr/bin/python3", "--baseline", snapshot]);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.equal(ok.stdout, `gpuprep: OK: ${hostname()} matches ${snapshot}\n`);
  const expected = join(work, "expected.yaml");
  writeFileSync(expected, 'torch: 2.11.0+cu130\npython: "3.12"\n');
  const drift = gpuprep(["fleet", "check", "--node", "--python", "/usr/bin/python3", "--baseline", expected]);
  assert.equal(drift.status, 1);
  assert.equal(drift.stdout.split("\n").length, 2, "one line");
  assert.match(
    drift.stdout,
    new RegExp(
      `^gpuprep: FAIL: ${hostname()}: torch-drift: torch differs from the baseline's 2\\.11\\.0\\+cu130: 1\\.13`,
    ),
  );
  assert.match(drift.stdout, /python-drift: .*differ in Python from the baseline's Python 3\.12/);
  const json = JSON.parse(
    gpuprep(["fleet", "check", "--node", "--python", "/usr/bin/python3", "--baseline", expected, "--json"])
      .stdout,
  ) as { schema: string; reference: { kind: string } };
  assert.equal(json.schema, "gpuprep.fleet");
  assert.equal(json.reference.kind, "baseline");
});

test("cannot check: no --node, no --baseline, no such interpreter: exit 2", () => {
  assert.equal(gpuprep(["fleet", "check", "--baseline", "x.yaml"]).status, 2);
  const noBaseline = gpuprep(["fleet", "check", "--node"]);
  assert.equal(noBaseline.status, 2);
  assert.match(noBaseline.stderr, /needs --baseline FILE/);
  const expected = join(work, "torch.yaml");
  writeFileSync(expected, "torch: 2.11.0+cu130\n");
  const gone = gpuprep([
    "fleet",
    "check",
    "--node",
    "--python",
    "/nonexistent/python3",
    "--baseline",
    expected,
  ]);
  assert.equal(gone.status, 2, gone.stdout);
});
