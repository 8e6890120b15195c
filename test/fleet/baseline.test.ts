/**
 * --baseline and the package comparison through the CLI, on snapshots derived from the real H100
 * capture (derive.ts): a majority that is wrong (the caller's pyenv PATH carried into 3 of 4 jobs)
 * is caught by a known-good node's snapshot; an expected-values file holds every node to its
 * values even when all agree; --ignore-package; bad baselines are one line, exit 2.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCapture } from "../doctor/captures.js";
import { nodeFrom } from "./derive.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-baseline-"));
const PYENV = "/home/me/.pyenv/versions/3.12.3/bin/python3";

function gpuprep(args: string[]) {
  return spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8" });
}
const byId = (r: FleetReport) => Object.fromEntries(r.fleetFindings.map((f) => [f.ruleId, f]));

function fleetDir(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  const h100 = loadCapture("h100-healthy");
  const pyenv = (f: Parameters<Parameters<typeof nodeFrom>[2]>[0]) =>
    void (f.python.interpreter.executable = PYENV);
  for (const n of [
    nodeFrom(h100, "gpu01"),
    nodeFrom(h100, "gpu02", pyenv),
    nodeFrom(h100, "gpu03", pyenv),
    nodeFrom(h100, "gpu04", pyenv),
  ])
    writeFileSync(join(dir, `${n.node}.json`), JSON.stringify(n.facts));
  return dir;
}

test("the majority is named as the reference, and a known-good snapshot overrules a wrong majority", () => {
  const dir = fleetDir("pyenv");
  const majority = JSON.parse(gpuprep(["fleet", "doctor", "--from", dir, "--json"]).stdout) as FleetReport;
  assert.equal(majority.reference.kind, "majority");
  assert.match(
    majority.reference.description,
    /group A \(3 of 4 checked nodes\) is taken as right; pass --baseline FILE/,
  );
  assert.deepEqual(
    byId(majority)["fleet-python-drift"]?.nodes,
    ["gpu01"],
    "the majority blames the good node",
  );
  const good = join(work, "good.json");
  writeFileSync(good, JSON.stringify(nodeFrom(loadCapture("h100-healthy"), "golden").facts));
  const run = gpuprep(["fleet", "doctor", "--from", dir, "--baseline", good, "--json"]);
  const judged = JSON.parse(run.stdout) as FleetReport;
  assert.equal(judged.reference.kind, "baseline");
  assert.equal(judged.reference.source, good);
  assert.deepEqual(byId(judged)["fleet-python-drift"]?.nodes, ["gpu02", "gpu03", "gpu04"]);
  assert.match(
    byId(judged)["fleet-python-drift"]?.message ?? "",
    /from the baseline's 3\.12\.3 \/opt\/torch\/\.venv\/bin\/python3/,
  );
  const text = gpuprep(["fleet", "doctor", "--from", dir, "--baseline", good]).stdout;
  assert.match(
    text,
    new RegExp(`Judged against the baseline snapshot ${good.replace(/[/.]/g, "\\$&")} \\(node golden\\)`),
  );
});

test("an expected-values file: every node held to it even when all agree; packages by name; --ignore-package", () => {
  const dir = join(work, "same");
  mkdirSync(dir);
  const h100 = loadCapture("h100-healthy");
  for (const name of ["gpu01", "gpu02"])
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(nodeFrom(h100, name).facts));
  const expected = join(work, "expected.yaml");
  writeFileSync(
    expected,
    [
      "torch: 2.10.0+cu128",
      'driver: "580"',
      "gpu: NVIDIA H100 80GB HBM3",
      "gpuCount: 8",
      'python: "3.12"',
      "packages:",
      "  execnet: 2.0.0",
      "",
    ].join("\n"),
  );
  const run = gpuprep(["fleet", "doctor", "--from", dir, "--baseline", expected, "--json"]);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as FleetReport;
  const ids = byId(report);
  assert.deepEqual(
    ids["fleet-torch-drift"]?.nodes,
    ["gpu01", "gpu02"],
    "both agree, both differ from the baseline",
  );
  assert.match(
    ids["fleet-torch-drift"]?.message ?? "",
    /torch differs from the baseline's 2\.10\.0\+cu128: 2\.11\.0\+cu130 on gpu\[01-02\]/,
  );
  assert.deepEqual(ids["fleet-gpu-mix"]?.nodes, ["gpu01", "gpu02"], "one GPU each, the baseline says 8");
  assert.equal(ids["fleet-driver-drift"], undefined, "driver branch 580 matches 580.159.04");
  assert.equal(ids["fleet-python-drift"], undefined, "3.12.3 is a 3.12");
  assert.match(
    ids["fleet-package-drift"]?.message ?? "",
    /execnet 2\.1\.2 on gpu\[01-02\] \(baseline: 2\.0\.0\)/,
  );
  const ignored = JSON.parse(
    gpuprep(["fleet", "doctor", "--from", dir, "--baseline", expected, "--ignore-package", "exec*", "--json"])
      .stdout,
  ) as FleetReport;
  assert.equal(byId(ignored)["fleet-package-drift"], undefined);
});

test("bad baselines and package patterns: one line, exit 2", () => {
  const dir = fleetDir("bad");
  const typo = join(work, "typo.yaml");
  writeFileSync(typo, "torch: 2.11.0\ngpu_count: 8\n");
  const unknown = gpuprep(["fleet", "doctor", "--from", dir, "--baseline", typo]);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /^gpuprep: error: --baseline .*typo\.yaml: .*gpu_count/);
  const missing = gpuprep(["fleet", "doctor", "--from", dir, "--baseline", join(work, "nope.yaml")]);
  assert.equal(missing.status, 2);
  const empty = join(work, "empty.yaml");
  writeFileSync(empty, "schema: gpuprep.fleet.baseline\n");
  assert.match(
    gpuprep(["fleet", "doctor", "--from", dir, "--baseline", empty]).stderr,
    /names no expected value/,
  );
  const pattern = gpuprep(["fleet", "doctor", "--from", dir, "--ignore-package", "a b"]);
  assert.equal(pattern.status, 2);
  assert.match(pattern.stderr, /--ignore-package "a b" is not a package name or pattern/);
  for (const r of [unknown, missing, pattern]) assert.doesNotMatch(r.stderr, /\n\s+at /);
});
