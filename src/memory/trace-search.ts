/**
 * The largest batch the trace tier says fits, with few traces (each is a process of ~10-60 s):
 * trace the smallest batch and its double (at once: two processes), extrapolate the per-sample
 * growth to the usable memory, then trace the guess and correct it until a traced batch fits.
 * Memory grows linearly in the batch for these models (docs/reports/memory-accuracy-h100.jsonl),
 * so one or two corrections suffice. `alsoTrace` (the batch asked) is traced with the first two;
 * no batch is traced twice.
 */
import type { TraceResult } from "./payload.js";
import { traceEstimate } from "./trace-tier.js";
import type { MemoryEstimate } from "./types.js";

export async function traceMaxBatch(
  traceAt: (batch: number) => Promise<MemoryEstimate>,
  usableBytes: number,
  batchMin: number,
  batchMax: number,
  alsoTrace: number[] = [],
): Promise<{ maxBatch: number | null; estimates: MemoryEstimate[] }> {
  const seen = new Map<number, Promise<MemoryEstimate>>();
  const at = (batch: number): Promise<MemoryEstimate> => {
    let pending = seen.get(batch);
    if (!pending) {
      pending = traceAt(batch);
      seen.set(batch, pending);
    }
    return pending;
  };
  const done = async (maxBatch: number | null) => ({
    maxBatch,
    estimates: (await Promise.all(seen.values())).sort((a, b) => a.batch - b.batch),
  });
  const secondBatch = Math.min(batchMin * 2, batchMax);
  // The first traces start together; a first that does not fit still waits for the others.
  const [first, second] = await Promise.all([at(batchMin), at(secondBatch), ...alsoTrace.map(at)]);
  if (first.totalBytes > usableBytes) return done(null);
  if (batchMin >= batchMax) return done(batchMin);
  if (second.totalBytes > usableBytes) return done(batchMin);
  const perSample = (second.totalBytes - first.totalBytes) / (second.batch - first.batch);
  let best = second.batch;
  let guess =
    perSample <= 0
      ? batchMax
      : Math.floor(first.batch + (usableBytes - first.totalBytes) / Math.max(perSample, 1));
  for (let tries = 0; tries < 4; tries++) {
    guess = Math.max(best, Math.min(batchMax, guess));
    if (guess === best) break;
    const estimate = await at(guess);
    if (estimate.totalBytes <= usableBytes) {
      best = guess;
      if (guess === batchMax) break;
      guess = Math.floor(guess + (usableBytes - estimate.totalBytes) / Math.max(perSample, 1));
    } else {
      guess = Math.floor(guess - (estimate.totalBytes - usableBytes) / Math.max(perSample, 1)) - 1;
    }
  }
  return done(best);
}

type SearchPoint = NonNullable<TraceResult["search"]>["points"][number];

/** A point of memory.py's search as the trace result it would have been, with its notes. */
function pointAsResult(result: TraceResult, point: SearchPoint): TraceResult {
  const [a, b] = point.interpolated ?? [];
  return {
    ...result,
    batch: point.batch,
    peakAllocatedBytes: point.peakAllocatedBytes,
    breakdown: point.breakdown,
    allocator: point.allocator,
    notes:
      a !== undefined && b !== undefined
        ? [
            ...result.notes,
            `interpolated from the traces at batches ${a} and ${b}: every allocation's size is affine in the batch (the answer was traced to check)`,
          ]
        : result.notes,
  };
}

/**
 * memory.py's in-process search (the batch asked traced, two adjacent batches traced, the rest
 * interpolated, the answer traced again) as estimates, checked by traceEstimate's own totals: the
 * answer must fit and the next batch must not, or the smallest must not fit where nothing does.
 * null where the search is missing or the check fails: the caller traces batch by batch instead.
 */
export function fromInProcessSearch(
  result: TraceResult,
  usableBytes: number,
  range: { min: number; max: number },
  targetGpu: string | null,
  shown: number[],
): { maxBatch: number | null; likelyMaxBatch: number | null; estimates: MemoryEstimate[] } | null {
  const search = result.search;
  if (!search) return null;
  const byBatch = new Map<number, MemoryEstimate>();
  for (const point of search.points)
    byBatch.set(point.batch, traceEstimate(pointAsResult(result, point), targetGpu));
  byBatch.set(result.batch, traceEstimate(result, targetGpu));
  const fits = (batch: number): boolean | undefined => {
    const estimate = byBatch.get(batch);
    return estimate === undefined ? undefined : estimate.totalBytes <= usableBytes;
  };
  const answer = search.maxBatch;
  const consistent =
    answer === null
      ? fits(range.min) === false
      : fits(answer) === true && (answer >= range.max || fits(answer + 1) === false);
  if (!consistent) return null;
  const keep = new Set([result.batch, range.min, ...shown, ...(answer === null ? [] : [answer, answer + 1])]);
  const estimates = [...byBatch.values()].filter((e) => keep.has(e.batch)).sort((x, y) => x.batch - y.batch);
  return { maxBatch: answer, likelyMaxBatch: search.likelyMaxBatch ?? null, estimates };
}
