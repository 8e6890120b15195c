import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { UserError } from "../errors.js";
import { parseFacts } from "../facts/io.js";
import type { Facts } from "../facts/schema.js";
import { deviceBudget, targetFromKb, verdictFor } from "./budget.js";
import { formulaEstimate } from "./formula.js";
import { AMP_TRAIN, FACTS_FIXTURES, MEMORY_FIXTURES, capturedModel } from "../../test/memory/support.js";

const MiB = 2 ** 20;
const load = (url: URL): Facts => parseFacts(readFileSync(url, "utf8"), url.pathname);
const h100 = () => load(new URL("h100-healthy.json", FACTS_FIXTURES));
const local = () => load(new URL("local-no-gpu-fast.json", MEMORY_FIXTURES));

test("a discrete GPU: nvidia-smi memory.total less the margin", () => {
  const budget = deviceBudget(h100(), null, 0.05);
  assert.equal(budget.totalBytes, 81559 * MiB);
  assert.equal(budget.usableBytes, Math.floor(81559 * MiB * 0.95));
  assert.equal(budget.unified, false);
  assert.match(budget.source, /nvidia-smi memory\.total/);
});

test("the probe records MemAvailable, and snapshots without it still read", () => {
  const host = local().host;
  assert.ok(host.memAvailableBytes && host.memTotalBytes);
  assert.ok(host.memAvailableBytes > 0 && host.memAvailableBytes <= host.memTotalBytes);
  assert.equal(h100().host.memAvailableBytes, undefined);
});

test("unified memory (GB10): MemAvailable, not the GPU's memory figure", () => {
  // Derived from local-no-gpu-fast.json (real, with MemAvailable) by changing one field, host.nvidia.gpus:
  // the GB10 as nvidia-smi lists it, memory.total [N/A] (https://github.com/unslothai/unsloth/pull/10283).
  const facts = local();
  const gpu = {
    ...h100().host.nvidia.gpus[0]!,
    name: "NVIDIA GB10",
    computeCapability: "12.1",
    memoryTotalMiB: null,
  };
  facts.host.nvidia.gpus = [gpu];
  const budget = deviceBudget(facts, null, 0.05);
  assert.equal(budget.unified, true);
  assert.equal(budget.usableBytes, Math.floor((facts.host.memAvailableBytes as number) * 0.95));
  assert.equal(budget.totalBytes, facts.host.memTotalBytes);
  assert.match(budget.source, /MemAvailable/);
});

test("unified memory seen only as nvidia-smi's N/A, in a snapshot older than MemAvailable: MemTotal, said so", () => {
  // Derived from h100-healthy.json by changing one field: gpus[0].memoryTotalMiB -> null ([N/A]).
  const facts = h100();
  facts.host.nvidia.gpus[0]!.memoryTotalMiB = null;
  const budget = deviceBudget(facts, null, 0.1);
  assert.equal(budget.unified, true);
  assert.equal(budget.usableBytes, Math.floor((facts.host.memTotalBytes as number) * 0.9));
  assert.match(budget.source, /MemTotal.*predates MemAvailable/);
});

test("KB targets: nvidia-smi MiB where known, vendor GB (decimal) otherwise; GB10 is unified, GH200 is not", () => {
  const h = targetFromKb("H100");
  assert.equal(h.memoryBytes, 81559 * MiB);
  assert.equal(h.unified, false);
  const spark = targetFromKb("DGX Spark");
  assert.equal(spark.name, "NVIDIA GB10");
  assert.equal(spark.memoryBytes, 128e9);
  assert.equal(spark.unified, true);
  assert.match(spark.source, /KB gpus\.json: 128 GB/);
  assert.equal(targetFromKb("GH200").unified, false);
  const budget = deviceBudget(null, spark, 0.05);
  assert.equal(budget.usableBytes, Math.floor(128e9 * 0.95));
  assert.match(budget.source, /unified memory/);
  assert.throws(() => targetFromKb("Voodoo 5"), UserError);
});

test("no GPU and no target, or a margin outside [0, 1): one-line UserError", () => {
  assert.throws(() => deviceBudget(local(), null, 0.05), /no NVIDIA GPU in the facts/);
  assert.throws(() => deviceBudget(null, null, 0.05), UserError);
  assert.throws(() => deviceBudget(h100(), null, 1.5), /safety margin/);
});

test("verdict: headroom is usable minus the estimate's total; negative is the memory missing", () => {
  const estimate = formulaEstimate(capturedModel("gpt2-small"), AMP_TRAIN, 8);
  const budget = deviceBudget(h100(), null, 0.05);
  const verdict = verdictFor(estimate, budget, 40);
  assert.equal(verdict.fits, true);
  assert.equal(verdict.headroomBytes, budget.usableBytes - estimate.totalBytes);
  assert.equal(verdict.maxBatch, 40);
  const small = deviceBudget(null, { name: "8 GB", memoryBytes: 8e9, unified: false, source: "test" }, 0.05);
  const tight = verdictFor(estimate, small, null);
  assert.equal(tight.fits, false);
  assert.equal(tight.headroomBytes, Math.floor(8e9 * 0.95) - estimate.totalBytes);
});
