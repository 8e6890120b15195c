/**
 * The memory HTML section in Debian's headless Chromium: it renders, logs no errors, fetches
 * nothing but itself, and its stacked bars have the proportions of the breakdown they draw. The
 * report is built from real parts: GPT-2 small's captured config, the formula tier, the H100
 * facts capture's budget, seed 001's rule on that budget, and as trials the research note's
 * measured H100 peaks (test/fixtures/memory/h100-research-2b.jsonl).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Browser } from "../validate/cdp.js";
import { parseFacts } from "../../src/facts/io.js";
import { deviceBudget, verdictFor } from "../../src/memory/budget.js";
import { formulaEstimate, maxBatchByFormula } from "../../src/memory/formula.js";
import { parseBenchJsonl } from "../../src/memory/fit.js";
import { scaledRule } from "../../src/memory/scaled-rule.js";
import { AMP_TRAIN, FACTS_FIXTURES, MEMORY_FIXTURES, capturedModel } from "./support.js";
import type { DeviceBudget, MeasuredTrial } from "../../src/memory/types.js";
import { BREAKDOWN_PARTS, type MemoryReport, renderMemoryHtml } from "../../src/report/memory-html.js";

const work = mkdtempSync(join(tmpdir(), "gpuprep-memory-html-"));
let browser: Browser;
before(async () => {
  browser = await Browser.launch();
});
after(async () => {
  await browser?.close();
});

const h100Budget = (): DeviceBudget =>
  deviceBudget(
    parseFacts(readFileSync(new URL("h100-healthy.json", FACTS_FIXTURES), "utf8"), "h100-healthy.json"),
    null,
    0.05,
  );

function measuredTrials(): MeasuredTrial[] {
  const records = parseBenchJsonl(
    readFileSync(new URL("h100-research-2b.jsonl", MEMORY_FIXTURES), "utf8"),
    "2b",
  );
  return records
    .filter((r) => r.model === "gpt2-small" && r.seqLen === 1024 && !r.gradCheckpointing)
    .map((r) => ({
      batch: r.batch,
      status: "ok",
      peakAllocatedBytes: r.truth.peakAllocatedBytes,
      peakReservedBytes: r.truth.peakReservedBytes,
      stepMs: null,
      error: null,
    }));
}

function reportFor(batch: number, device: DeviceBudget, trials: MeasuredTrial[]): MemoryReport {
  const model = capturedModel("gpt2-small");
  const estimate = formulaEstimate(model, AMP_TRAIN, batch);
  const maxBatch = maxBatchByFormula(model, AMP_TRAIN, device);
  // As with --batch N: the asked batch, and the largest the estimate allows (when it differs).
  const largest =
    maxBatch !== null && maxBatch !== batch ? [formulaEstimate(model, AMP_TRAIN, maxBatch)] : [];
  return {
    model: {
      source: { kind: "config", path: model.path },
      name: "gpt2-small",
      parameterCount: model.parameterCount,
    },
    work: AMP_TRAIN,
    device,
    estimates: [estimate, ...largest],
    verdict: verdictFor(estimate, device, maxBatch),
    trials,
    measuredMaxBatch: null,
    searchRange: { min: 1, max: 1024 },
    traceFallback: null,
    alternatives: [],
    bestThroughputBatch: null,
    scaledRule: {
      currentBatch: batch,
      currentBytes: estimate.totalBytes,
      currentSource: "--current-memory",
      offFromMeasuredPct: null,
      ...scaledRule({
        currentBatch: batch,
        currentBytes: estimate.totalBytes,
        totalBytes: device.totalBytes,
      }),
    },
    notes: estimate.notes,
  };
}

interface Geometry {
  segments: Array<{ estimate: number; part: string; bytes: number; width: number; left: number }>;
  device: { width: number; left: number };
  usableX: number;
}

/** Reads the drawn chart back from the page: rendered widths, not the attributes we wrote. */
async function geometry(url: string): Promise<Geometry> {
  const created = await browser.send("Target.createTarget", { url });
  const targetId = created.result?.targetId as string;
  const attached = await browser.send("Target.attachToTarget", { targetId, flatten: true });
  const sessionId = attached.result?.sessionId as string;
  const evaluate = async (expression: string) =>
    (
      (await browser.send("Runtime.evaluate", { expression, returnByValue: true }, sessionId)).result
        ?.result as { value: unknown }
    ).value;
  // The new target starts on about:blank (already "complete"): wait for our page itself to finish loading.
  const loaded = `location.href === ${JSON.stringify(url)} && document.readyState === "complete"`;
  for (let i = 0; i < 200 && (await evaluate(loaded)) !== true; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const value = await evaluate(`JSON.stringify({
    segments: [...document.querySelectorAll("rect.seg")].map((r) => ({ estimate: Number(r.dataset.estimate),
      part: r.dataset.part, bytes: Number(r.dataset.bytes), width: r.getBoundingClientRect().width, left: r.getBoundingClientRect().left })),
    device: (() => { const b = document.querySelector("rect.device").getBoundingClientRect(); return { width: b.width, left: b.left }; })(),
    usableX: document.querySelector("line.usable").getBoundingClientRect().left,
  })`);
  await browser.send("Target.closeTarget", { targetId });
  return JSON.parse(String(value)) as Geometry;
}

async function render(name: string, report: MemoryReport) {
  const file = join(work, `${name}.html`);
  writeFileSync(file, renderMemoryHtml(report));
  const url = pathToFileURL(file).href;
  const page = await browser.visit(url);
  assert.deepEqual(page.requests, [url], "the page loads nothing but itself");
  assert.deepEqual(page.problems, [], "no console errors or warnings");
  return { page, url };
}

test("a batch that fits: verdict, breakdown bars in proportion to the bytes, usable line, trials", async () => {
  const device = h100Budget();
  const report = reportFor(8, device, measuredTrials());
  const { page, url } = await render("fits", report);
  assert.match(page.text, /Fits: [\d.]+ GiB to spare of 75\.67 GiB usable/);
  assert.match(page.text, /nvidia-smi memory\.total/);
  assert.match(page.text, /seed 001's rule/);
  assert.match(page.text, /formula · batch 8\n/);
  assert.match(page.text, new RegExp(`formula · batch ${report.verdict.maxBatch}\\n`));
  assert.match(page.text, /measured accuracy median/);
  assert.ok(page.text.includes("12.69 GiB"), "the measured trial's peak is in the table");
  assert.ok(page.text.includes("45.62 GiB"), "the measured trial's peak is in the table");
  const g = await geometry(url);
  const drawn = report.estimates.flatMap((e) => BREAKDOWN_PARTS.filter((p) => e.breakdown[p.key] > 0));
  assert.equal(g.segments.length, drawn.length, "one segment per non-zero part");
  // The device frame spans the device's total memory (every estimate is below it here).
  const pxPerByte = g.device.width / device.totalBytes;
  for (const seg of g.segments) {
    const expected = seg.bytes * pxPerByte;
    assert.ok(
      Math.abs(seg.width - expected) <= Math.max(0.5, expected * 0.005),
      `${seg.part}: ${seg.width} px vs ${expected}`,
    );
  }
  const estimate = report.estimates[0]!;
  const first = g.segments.filter((s) => s.estimate === 0);
  const total = first.reduce((s, seg) => s + seg.width, 0);
  assert.ok(
    Math.abs(total - estimate.totalBytes * pxPerByte) < 1.5,
    "segments add up to the estimate's total",
  );
  assert.equal(first.find((s) => s.part === "activations")?.bytes, estimate.breakdown.activations);
  const usable = g.device.left + device.usableBytes * pxPerByte;
  assert.ok(Math.abs(g.usableX + 1 - usable) < 2, `usable line at ${g.usableX} px, expected ${usable}`);
});

test("a batch that does not fit: the memory missing, and the scale grows past the device", async () => {
  const device = deviceBudget(
    null,
    { name: "16 GB card", memoryBytes: 16e9, unified: false, source: "test target" },
    0.05,
  );
  const base = reportFor(32, device, []);
  // As memory-trace's CLI fills it: where the current memory came from, and the rule against a measured answer.
  const rule = base.scaledRule
    ? { ...base.scaledRule, currentSource: "--current-memory", offFromMeasuredPct: -20 }
    : null;
  const report: MemoryReport = { ...base, scaledRule: rule };
  assert.equal(report.verdict.fits, false);
  const { page, url } = await render("no-fit", report);
  const missing = (-report.verdict.headroomBytes / 2 ** 30).toFixed(2);
  assert.ok(page.text.includes(`Does not fit: ${missing} GiB missing`), page.text.slice(0, 400));
  assert.ok(!/Measured trials/.test(page.text), "no trials section without trials");
  assert.match(page.text, /current memory from --current-memory\); 20\.0 % below the measured largest batch/);
  const g = await geometry(url);
  const widest = Math.max(...report.estimates.map((e) => e.totalBytes));
  const bar = g.segments.filter((s) => s.estimate === 0).reduce((s, seg) => s + seg.width, 0);
  assert.ok(bar > g.device.width, "the estimate's bar runs past the device frame");
  assert.ok(Math.abs(g.device.width / bar - device.totalBytes / widest) < 0.01);
});
