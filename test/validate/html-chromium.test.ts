/**
 * The validate HTML report in Debian's headless Chromium: it renders, shows the numbers, logs no
 * errors and fetches nothing but the file itself. Inputs: every real report captured under
 * test/fixtures/validate, rendered through the CLI's --from path, plus the CPU-mode benchmark
 * payload judged against given peaks so the charts have bars to draw.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";
import { Browser } from "./cdp.js";
import { cpuModePayload, savedReports } from "./fixtures.js";
import { judgePayload } from "../../src/validate/judge.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { renderHtmlReport } from "../../src/report/html.js";
import { toHtmlReport } from "../../src/report/validate.js";
import type { ValidateReport } from "../../src/validate/report.js";
import { compareReports } from "../../src/validate/compare.js";
import { compareHtml } from "../../src/report/validate-compare.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-html-"));
let browser: Browser;

before(async () => {
  browser = await Browser.launch();
});
after(async () => {
  await browser?.close();
});

async function checkPage(file: string, report: ValidateReport) {
  const url = pathToFileURL(file).href;
  const page = await browser.visit(url);
  assert.deepEqual(page.requests, [url], "the page loads nothing but itself");
  assert.deepEqual(page.problems, [], "no console errors or warnings");
  assert.match(page.text, /gpuprep validate/);
  assert.match(page.text, new RegExp(`\\b${report.summary.fail}\\s*failed`));
  for (const item of report.items) {
    assert.ok(page.text.includes(item.title), `shows "${item.title}"`);
    assert.ok(page.text.includes(item.reason.slice(0, 60)), `shows the reason of "${item.title}"`);
  }
  return page;
}

for (const { file, report } of savedReports()) {
  test(`HTML of ${file.split("/").pop()} renders in Chromium`, async () => {
    const html = join(work, `${report.createdAt.replace(/\W/g, "")}.html`);
    const run = spawnSync(process.execPath, [MAIN, "validate", "--from", file, "--html", html], {
      encoding: "utf8",
    });
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    const judged = JSON.parse(
      spawnSync(process.execPath, [MAIN, "validate", "--from", file, "--json"], { encoding: "utf8" }).stdout,
    ) as ValidateReport;
    await checkPage(html, judged);
  });
}

test("achieved-vs-peak and attention-backend bars show the measured figures", async () => {
  const peak = {
    name: "test peaks",
    tflops: { bf16: 1, fp16: 1, tf32: 0.5, fp32: 0.05 },
    memoryBandwidthGBs: 50,
    sources: ["test input"],
  };
  const report = judgePayload(cpuModePayload("2.13"), loadKnowledgeBase(), { transport: "local", peak });
  const withRatio = report.items.filter((i) => i.ratio !== undefined && i.category !== "sdpa");
  assert.ok(withRatio.length >= 3, "matmul and membw are held against the peaks");
  const file = join(work, "cpu-mode.html");
  writeFileSync(file, renderHtmlReport(toHtmlReport(report)));
  const page = await checkPage(file, report);
  // One measured bar and one reference bar per figure held against a peak; one bar for manual
  // attention and each backend that ran (and the default dispatch).
  const sdpa = report.items.filter(
    (i) => i.category === "sdpa" && i.measured?.unit === "x manual" && i.id !== "bench.sdpa.fused",
  );
  assert.ok(sdpa.length >= 2, "flash and math ran on the CPU");
  assert.equal(page.svgRects, withRatio.length * 2 + 1 + sdpa.length + 1);
  for (const item of sdpa) assert.ok(page.text.includes(`${item.measured?.value.toFixed(2)}x`), item.title);
  for (const item of withRatio) {
    const pct = `${((item.ratio ?? 0) * 100).toFixed(0)}%`;
    assert.ok(page.text.includes(pct), `chart shows ${pct} for ${item.title}`);
  }
});

test("H100 report: a legend per chart, each judged bar's pass and warn limits drawn, the tables of issue 27", async () => {
  const file = savedReports().find((r) => r.file.endsWith("report-h100-issue27.json"));
  assert.ok(file);
  const report = judgePayload(file.report.payload, loadKnowledgeBase(), {
    transport: "local",
    createdAt: file.report.createdAt,
  });
  const html = join(work, "h100-issue27.html");
  writeFileSync(html, renderHtmlReport(toHtmlReport(report)));
  const page = await checkPage(html, report);
  // Achieved vs peak: a line per non-zero limit of each judged bar; SDPA: the judged bar's two.
  const peakMarks = report.items
    .filter((i) => i.limits && i.reference && i.category !== "sdpa")
    .reduce((sum, i) => sum + [i.limits?.pass, i.limits?.warn].filter((v) => (v ?? 0) > 0).length, 0);
  assert.ok(peakMarks >= 12, `${peakMarks} threshold lines on the peak chart`);
  assert.equal(page.svgLines, peakMarks + 2);
  assert.equal(page.legendEntries, 6 + 6, "both charts have their legend");
  for (const text of ["judged: pass", "shown, not judged", "each judged bar's pass and warn limits"])
    assert.ok(page.text.includes(text), text);
  for (const heading of ["Feature matrix", "Kernel provenance", "JIT check"])
    assert.ok(page.text.includes(heading), heading);
  assert.match(page.text, /not on this architecture/);
  assert.match(page.text, /jit-dependent/);
  assert.match(page.text, /captured 2026-11-27T15:56:26\.478Z, judged again/);
});

test("--compare HTML of two real reports renders: environment, one ratio bar per shared figure, B = A drawn", async () => {
  const [a, b] = ["report-h100.json", "report-h100-issue27.json"].map((name) => {
    const found = savedReports().find((r) => r.file.endsWith(name));
    assert.ok(found);
    return found;
  }) as [ReturnType<typeof savedReports>[number], ReturnType<typeof savedReports>[number]];
  const kb = loadKnowledgeBase();
  const judge = (r: typeof a) =>
    judgePayload(r.report.payload, kb, { transport: r.report.transport, createdAt: r.report.createdAt });
  const comparison = compareReports(judge(a), judge(b), "A.json", "B.json");
  const file = join(work, "compare.html");
  writeFileSync(file, renderHtmlReport(compareHtml(comparison)));
  const url = pathToFileURL(file).href;
  const page = await browser.visit(url);
  assert.deepEqual(page.requests, [url]);
  assert.deepEqual(page.problems, []);
  const shared = comparison.figures.filter((f) => f.ratio !== null);
  assert.ok(shared.length >= 30);
  assert.equal(page.svgRects, shared.length);
  assert.equal(page.svgLines, shared.length, "a B = A line on every bar");
  assert.ok(page.text.indexOf("Environment") < page.text.indexOf("B / A for each figure"));
  for (const figure of comparison.figures) assert.ok(page.text.includes(figure.title), figure.title);
  assert.match(page.text, /not recorded in one/i);
});
