/** The measured search and the trace-based max batch, driven by runners whose limits we set. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { measuredSearch, type TrialOutcome } from "../../src/memory/search.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TraceResult } from "../../src/memory/payload.js";
import { fromInProcessSearch, traceMaxBatch } from "../../src/memory/trace-search.js";
import type { MemoryEstimate } from "../../src/memory/types.js";

const GIB = 1024 ** 3;

/** A card of `total` where a batch uses fixed + b * perSample; over the card it runs out of memory. */
function card(
  total: number,
  fixed: number,
  perSample: number,
  extra: Partial<Record<number, Partial<TrialOutcome>>> = {},
) {
  const calls: number[] = [];
  const run = async (batch: number, steps: number): Promise<TrialOutcome> => {
    calls.push(batch);
    const used = fixed + batch * perSample;
    const base: TrialOutcome =
      used > total
        ? {
            batch,
            status: "oom",
            peakAllocatedBytes: total,
            peakReservedBytes: total,
            stepMs: null,
            error: "CUDA out of memory",
          }
        : {
            batch,
            status: "ok",
            peakAllocatedBytes: used,
            peakReservedBytes: used,
            stepMs: 10 + batch * (batch > 8 ? 2 : 1),
            error: null,
          };
    return { ...base, ...(extra[batch] ?? {}), batch, ...(steps === 20 ? {} : {}) };
  };
  return { run, calls };
}

const options = { totalBytes: 80 * GIB, marginFraction: 0.05, contextBytes: 0, steps: 3, confirmSteps: 20 };

test("doubles, then bisects to the largest batch under (1 - margin) of the card, and confirms it", async () => {
  // 2 GiB fixed + 1 GiB per sample: 76 GiB usable allows 74 samples.
  const { run, calls } = card(80 * GIB, 2 * GIB, GIB);
  const result = await measuredSearch(run, { ...options, batchMin: 1, batchMax: 512 });
  assert.equal(result.maxBatch, 74);
  assert.equal(result.confirmed, true);
  assert.deepEqual(calls.slice(0, 8), [1, 2, 4, 8, 16, 32, 64, 128]);
  const confirm = result.trials.filter((t) => t.purpose === "confirm");
  assert.deepEqual(
    confirm.map((t) => t.batch),
    [74],
  );
  // A batch that ran but used more than 95 % of the card (77 GiB at 75) failed the search.
  assert.equal(result.trials.find((t) => t.batch === 75)?.passed, false);
  // Doubling then bisecting costs at most 2 log2(max) trials, plus the confirmation.
  assert.ok(result.trials.length <= 2 * Math.ceil(Math.log2(512)) + 1, `trials: ${calls.join(",")}`);
});

test("a trial that hangs counts as failed and the search goes on below it", async () => {
  const { run } = card(80 * GIB, 2 * GIB, GIB, {
    8: {
      status: "timeout",
      peakAllocatedBytes: null,
      peakReservedBytes: null,
      stepMs: null,
      error: "killed at 30 s",
    },
  });
  const result = await measuredSearch(run, { ...options, batchMin: 1, batchMax: 64 });
  assert.equal(result.maxBatch, 7);
  assert.equal(result.trials.find((t) => t.batch === 8)?.status, "timeout");
});

test("a confirmation run that fails steps down to the next passing batch", async () => {
  let confirmCalls = 0;
  const inner = card(80 * GIB, 2 * GIB, GIB);
  const run = async (batch: number, steps: number): Promise<TrialOutcome> => {
    if (steps === 20 && batch === 74) {
      confirmCalls++;
      return {
        batch,
        status: "oom",
        peakAllocatedBytes: null,
        peakReservedBytes: null,
        stepMs: null,
        error: "fragmented",
      };
    }
    return inner.run(batch, steps);
  };
  const result = await measuredSearch(run, { ...options, batchMin: 1, batchMax: 512 });
  assert.equal(confirmCalls, 1);
  assert.ok(result.maxBatch !== null && result.maxBatch < 74, `stepped down to ${result.maxBatch}`);
  assert.equal(result.confirmed, true);
  assert.match(result.notes.join("\n"), /failed its 20-step confirmation run/);
});

test("nothing fits: no answer; the best time per sample is among passing batches only", async () => {
  const none = await measuredSearch(card(10 * GIB, 20 * GIB, GIB).run, {
    ...options,
    totalBytes: 10 * GIB,
    batchMin: 1,
    batchMax: 8,
  });
  assert.equal(none.maxBatch, null);
  assert.equal(none.bestThroughputBatch, null);
  const some = await measuredSearch(card(80 * GIB, 2 * GIB, GIB).run, {
    ...options,
    batchMin: 1,
    batchMax: 16,
  });
  // stepMs = 10 + b (b <= 8) or 10 + 2b: per sample lowest at the largest batch, 16 -> (10+32)/16 = 2.6 vs 8 -> 18/8 = 2.25
  assert.equal(some.bestThroughputBatch, 8);
});

function estimateAt(batch: number, fixed: number, perSample: number): MemoryEstimate {
  const total = fixed + batch * perSample;
  return {
    tier: "trace",
    batch,
    peakAllocatedBytes: total,
    totalBytes: total,
    breakdown: {
      parameters: fixed,
      gradients: 0,
      optimizerState: 0,
      activations: batch * perSample,
      temporaries: 0,
      cudaContext: 0,
      allocatorOverhead: 0,
    },
    parameterCount: 1,
    trainableParameterCount: 1,
    accuracy: null,
    notes: [],
  };
}

test("the trace-based max batch lands on the exact limit of a linear model in a few traces", async () => {
  const traced: number[] = [];
  const found = await traceMaxBatch(
    async (b) => (traced.push(b), estimateAt(b, 10 * GIB, 0.3 * GIB)),
    76 * GIB,
    1,
    1024,
  );
  assert.equal(found.maxBatch, 220); // (76 - 10) / 0.3 = 220
  assert.ok(traced.length <= 5, `traces: ${traced.join(",")}`);
  const none = await traceMaxBatch(async (b) => estimateAt(b, 90 * GIB, GIB), 76 * GIB, 1, 64);
  assert.equal(none.maxBatch, null);
  const capped = await traceMaxBatch(async (b) => estimateAt(b, GIB, 1024), 76 * GIB, 1, 32);
  assert.equal(capped.maxBatch, 32);
});

test("the batch asked is traced with the search's first two at once, and no batch twice", async () => {
  const traced: number[] = [];
  let running = 0;
  let most = 0;
  const traceAt = async (b: number) => {
    traced.push(b);
    most = Math.max(most, ++running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    return estimateAt(b, 10 * GIB, 0.3 * GIB);
  };
  const found = await traceMaxBatch(traceAt, 76 * GIB, 1, 1024, [8]);
  assert.equal(found.maxBatch, 220);
  assert.equal(most, 3); // 1, 2 and 8 together
  assert.ok(found.estimates.some((e) => e.batch === 8));
  assert.equal(new Set(traced).size, traced.length, `traced: ${traced.join(",")}`);
  traced.length = 0;
  await traceMaxBatch(traceAt, 76 * GIB, 1, 1024, [1]);
  assert.equal(traced.filter((b) => b === 1).length, 1);
});

const CAPTURE = JSON.parse(
  readFileSync(
    fileURLToPath(new URL("../../../test/memory/fixtures/trace-search-gpt2-tiny.json", import.meta.url)),
    "utf8",
  ),
) as TraceResult;
const CURVE = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

test("memory.py's in-process search as estimates: its answer holds by traceEstimate's totals", () => {
  const found = fromInProcessSearch(CAPTURE, 8e9, { min: 1, max: 1024 }, "H100 SXM", CURVE);
  assert.ok(found);
  assert.equal(found.maxBatch, CAPTURE.search?.maxBatch);
  const at = (b: number) => found.estimates.find((e) => e.batch === b);
  const answer = at(found.maxBatch as number);
  const next = at((found.maxBatch as number) + 1);
  assert.ok(answer && next);
  assert.ok(answer.totalBytes <= 8e9 && next.totalBytes > 8e9);
  // The chart's batches, the batch asked and the answer's neighbour; the interpolated ones say so.
  assert.deepEqual(
    found.estimates.map((e) => e.batch),
    [...new Set([...CURVE, found.maxBatch as number, (found.maxBatch as number) + 1])].sort((a, b) => a - b),
  );
  assert.match(at(4)?.notes.join("\n") ?? "", /interpolated from the traces at batches 2 and 3/);
  assert.doesNotMatch(at(1)?.notes.join("\n") ?? "", /interpolated/);
  // Totals grow with the batch along the curve.
  const totals = found.estimates.map((e) => e.totalBytes);
  assert.deepEqual(
    totals,
    [...totals].sort((a, b) => a - b),
  );
});

test("an in-process answer that does not hold by this gpuprep's totals, or no search at all: null", () => {
  const answer = fromInProcessSearch(CAPTURE, 8e9, { min: 1, max: 1024 }, "H100 SXM", CURVE);
  const total = answer?.estimates.find((e) => e.batch === answer.maxBatch)?.totalBytes as number;
  assert.equal(fromInProcessSearch(CAPTURE, total - 1, { min: 1, max: 1024 }, "H100 SXM", CURVE), null);
  const { search: _search, ...plain } = CAPTURE;
  assert.equal(fromInProcessSearch(plain, 8e9, { min: 1, max: 1024 }, "H100 SXM", CURVE), null);
});
