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
import { driver, gpu, nccl, nodeFrom, torch, visibleDevices } from "./derive.js";
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
  assert.match(page.text, /Judged against\s+the majority: group A/);
  for (const n of report.nodes) assert.ok(page.text.includes(n.node), n.node);
  for (const f of [...report.fleetFindings, ...report.nodeFindings])
    assert.ok(page.text.includes(f.ruleId), f.ruleId);

  // Item 13, in a 1280 px window: nothing wider than it, a node with an error finding is not a
  // green "ok", no rule id as a column head, no empty "not checked" table.
  const layout = await layoutAt1280(browser, url);
  assert.ok(layout.scrollWidth <= 1280, `the page is ${layout.scrollWidth}px wide`);
  for (const head of layout.heads)
    assert.doesNotMatch(head, /^[a-z0-9]+(-[a-z0-9]+)+$/, `"${head}" is a rule id`);
  const gpu03 = layout.verdicts["gpu03"];
  assert.equal(gpu03?.text, "error", "gpu03's driver fails torch's CUDA: its verdict is the error");
  assert.match(gpu03?.className ?? "", /s-fail/);
  assert.equal(layout.verdicts["gpu01"]?.text, "ok");
  assert.ok(layout.sections.includes("Nodes not checked"), "two files are not snapshots");
  const clean = join(work, "clean.html");
  const healthy = gpuprep([
    "fleet",
    "doctor",
    "--from",
    join(snapshots, "gpu01.json"),
    join(snapshots, "gpu02.json"),
    "--html",
    clean,
  ]);
  assert.equal(healthy.status, 0, healthy.stderr);
  const cleanLayout = await layoutAt1280(browser, pathToFileURL(clean).href);
  assert.ok(!cleanLayout.sections.includes("Nodes not checked"), "no empty table");
  assert.ok(cleanLayout.scrollWidth <= 1280);
  // A wide fleet: the H100 and 2x H200 captures (other packages and binaries), a pyenv path, and
  // enough drift for a dozen checks (the old node x check matrix drew this 1585 px wide).
  const mixed = join(work, "mixed");
  mkdirSync(mixed);
  const h100 = loadCapture("h100-healthy");
  const wideFleet = [
    nodeFrom(h100, "gpu01"),
    nodeFrom(loadCapture("h200x2-healthy"), "gpu02"),
    nodeFrom(h100, "gpu03", (f) => {
      f.python.interpreter.executable =
        "/home/researcher/.pyenv/versions/3.12.3/envs/llm-finetune-2026-11/bin/python3.12";
    }),
    nodeFrom(h100, "gpu04", driver("550.54.15", "12.4"), visibleDevices("")),
    nodeFrom(h100, "gpu05", torch("2.10.0+cu128", "12.8"), nccl("2.27.3"), (f) => {
      f.host.cpuArch = "aarch64";
      if (f.python.numpy) f.python.numpy.version = "1.26.4";
    }),
    nodeFrom(h100, "gpu06", gpu("NVIDIA GeForce GTX 1080 Ti", "6.1")),
  ];
  for (const n of wideFleet) writeFileSync(join(mixed, `${n.node}.json`), JSON.stringify(n.facts));
  const wide = join(work, "mixed.html");
  gpuprep(["fleet", "doctor", "--from", mixed, "--html", wide]);
  const wideLayout = await layoutAt1280(browser, pathToFileURL(wide).href);
  assert.ok(wideLayout.scrollWidth <= 1280, `the wide fleet's report is ${wideLayout.scrollWidth}px wide`);
});

/** The page laid out at 1280 x 900 CSS pixels: its width, table heads, section titles, each node's verdict cell. */
async function layoutAt1280(browser: Browser, url: string) {
  const created = await browser.send("Target.createTarget", { url: "about:blank" });
  const attached = await browser.send("Target.attachToTarget", {
    targetId: created.result?.["targetId"],
    flatten: true,
  });
  const session = attached.result?.["sessionId"] as string;
  await browser.send(
    "Emulation.setDeviceMetricsOverride",
    { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false },
    session,
  );
  await browser.send("Page.navigate", { url }, session);
  const evaluate = async (expression: string): Promise<unknown> =>
    (
      (await browser.send("Runtime.evaluate", { expression, returnByValue: true }, session)).result?.[
        "result"
      ] as { value: unknown }
    ).value;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && (await evaluate("document.readyState")) !== "complete")
    await new Promise((r) => setTimeout(r, 100));
  return (await evaluate(`JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth,
    heads: [...document.querySelectorAll("th")].map((th) => th.textContent.trim()),
    sections: [...document.querySelectorAll("h2")].map((h) => h.textContent.trim()),
    verdicts: Object.fromEntries([...document.querySelectorAll("table")].filter((t) => t.querySelector("th")?.textContent === "node" && [...t.querySelectorAll("th")].some((h) => h.textContent === "verdict"))
      .flatMap((t) => [...t.querySelectorAll("tbody tr")].map((tr) => [tr.cells[0].textContent.trim(), { text: tr.cells[1].textContent.trim(), className: tr.cells[1].outerHTML }]))),
  })`).then((v) => JSON.parse(String(v)))) as {
    scrollWidth: number;
    heads: string[];
    sections: string[];
    verdicts: Record<string, { text: string; className: string }>;
  };
}

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
