/**
 * `gpuprep fleet doctor --from`: snapshots of nodes derived from real captures (derive.ts) written
 * to a directory beside files that are not snapshots; the report is rendered as text, JSON,
 * JUnit and HTML, and the HTML checked in Debian's headless Chromium.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadCapture } from "../doctor/captures.js";
import { driver, nodeFrom, torch } from "./derive.js";
import { Browser } from "../validate/cdp.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-from-"));
const snapshots = join(work, "snapshots");
let browser: Browser;

before(async () => {
  mkdirSync(snapshots);
  const h100 = loadCapture("h100-healthy");
  const nodes = [
    nodeFrom(h100, "gpu01"),
    nodeFrom(h100, "gpu02"),
    nodeFrom(h100, "gpu03", driver("550.54.15", "12.4")),
    nodeFrom(h100, "gpu04", torch("2.10.0+cu128", "12.8")),
  ];
  for (const n of nodes) writeFileSync(join(snapshots, `${n.node}.json`), JSON.stringify(n.facts));
  // Not snapshots: another tool's JSON, and bytes that are not JSON at all.
  writeFileSync(join(snapshots, "zz-package.json"), JSON.stringify({ name: "x", version: "1.0.0" }));
  writeFileSync(join(snapshots, "zz-noise.json"), "\u0000\u0001garbage{{{");
  browser = await Browser.launch();
});
after(async () => {
  await browser?.close();
});

function gpuprep(args: string[]) {
  return spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8" });
}

test("--from DIR merges the snapshots; files that are not snapshots are garbage nodes, not a crash", async () => {
  const html = join(work, "fleet.html");
  const junit = join(work, "fleet.xml");
  const run = gpuprep(["fleet", "doctor", "--from", snapshots, "--json", "--html", html, "--junit", junit]);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as FleetReport & { schema: string; tool: { name: string } };
  assert.equal(report.schema, "gpuprep.fleet");
  assert.equal(report.tool.name, "gpuprep");
  assert.deepEqual(
    report.nodes.map((n) => [n.node, n.status]),
    [
      ["gpu01", "ok"],
      ["gpu02", "ok"],
      ["gpu03", "ok"],
      ["gpu04", "ok"],
      ["zz-noise", "garbage"],
      ["zz-package", "garbage"],
    ],
  );
  assert.match(
    report.nodes.find((n) => n.node === "zz-package")?.reason ?? "",
    /is not a gpuprep facts snapshot/,
  );
  const ids = Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f.nodes]));
  assert.deepEqual(ids["fleet-driver-drift"], ["gpu03"]);
  assert.deepEqual(ids["fleet-torch-drift"], ["gpu04"]);
  assert.deepEqual(ids["fleet-node-garbage"], ["zz-noise", "zz-package"]);
  assert.equal((readFileSync(junit, "utf8").match(/<testcase /g) ?? []).length, 6);

  // The node x check matrix in a real browser: loads nothing but itself, no console errors,
  // one row per node and a column for each check that fired.
  const url = pathToFileURL(html).href;
  const page = await browser.visit(url);
  assert.deepEqual(page.requests, [url]);
  assert.deepEqual(page.problems, []);
  assert.match(page.text, /gpuprep fleet doctor/);
  assert.match(page.text, /Nodes x checks/);
  for (const n of report.nodes) assert.ok(page.text.includes(n.node), n.node);
  for (const f of [...report.fleetFindings, ...report.nodeFindings])
    assert.ok(page.text.includes(f.ruleId), f.ruleId);
});

test("--from FILE...: a doctor --json report counts as a snapshot; text output names groups and drift", () => {
  const doctorJson = join(work, "gpu09.json");
  const doctor = gpuprep(["doctor", "--from", join(snapshots, "gpu01.json"), "--json"]);
  writeFileSync(doctorJson, doctor.stdout);
  const run = gpuprep([
    "fleet",
    "doctor",
    "--from",
    join(snapshots, "gpu01.json"),
    join(snapshots, "gpu03.json"),
    doctorJson,
  ]);
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /^gpuprep fleet doctor — 3 nodes via snapshots: 3 checked, 0 not, 2 groups/);
  assert.match(run.stdout, /1 of 3 nodes have driver 550\.54\.15; torch 2\.11\.0\+cu130/);
  assert.match(
    run.stdout,
    /gpu01 \(gpu01\.json\)|gpu01 \(gpu09\.json\)/,
    "two snapshots of one node are told apart by file",
  );
});

test("bad --from input: one line, exit 2", () => {
  const notSnapshot = gpuprep(["fleet", "doctor", "--from", join(snapshots, "zz-package.json")]);
  assert.equal(notSnapshot.status, 2);
  assert.match(
    notSnapshot.stderr,
    /^gpuprep: error: --from: none of the 1 file is a gpuprep snapshot .*not a gpuprep facts snapshot/,
  );
  assert.equal(notSnapshot.stderr.trim().split("\n").length, 2, "one line and a hint");
  const missing = gpuprep(["fleet", "doctor", "--from", join(work, "nope")]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^gpuprep: error: --from .*nope: ENOENT/);
  const neither = gpuprep(["fleet", "doctor"]);
  assert.equal(neither.status, 2);
  assert.match(neither.stderr, /say where the nodes are/);
  const both = gpuprep(["fleet", "doctor", "--slurm", "--from", snapshots]);
  assert.equal(both.status, 2);
  const sub = gpuprep(["fleet", "inspect"]);
  assert.equal(sub.status, 2);
  assert.match(sub.stderr, /unknown fleet subcommand 'inspect'/);
});
