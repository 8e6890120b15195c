/**
 * The largest batch the trace tier says fits, with few traces (each is a process of ~10-60 s):
 * trace the smallest batch and its double, extrapolate the per-sample growth to the usable memory,
 * then trace the guess and correct it until a traced batch fits. Memory grows linearly in the batch
 * for these models (docs/reports/memory-accuracy-h100.jsonl), so one or two corrections suffice.
 */
import type { MemoryEstimate } from "./types.js";

export async function traceMaxBatch(
  traceAt: (batch: number) => Promise<MemoryEstimate>,
  usableBytes: number,
  batchMin: number,
  batchMax: number,
): Promise<{ maxBatch: number | null; estimates: MemoryEstimate[] }> {
  const seen = new Map<number, MemoryEstimate>();
  const at = async (batch: number): Promise<MemoryEstimate> => {
    const known = seen.get(batch);
    if (known) return known;
    const estimate = await traceAt(batch);
    seen.set(batch, estimate);
    return estimate;
  };
  const done = (maxBatch: number | null) => ({
    maxBatch,
    estimates: [...seen.values()].sort((a, b) => a.batch - b.batch),
  });
  const first = await at(batchMin);
  if (first.totalBytes > usableBytes) return done(null);
  if (batchMin >= batchMax) return done(batchMin);
  const second = await at(Math.min(batchMin * 2, batchMax));
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
