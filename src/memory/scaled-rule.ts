/**
 * Seed 001's batch-size rule, exactly as the seed states it ("Batch Size Calculation for GPU
 * Training", ../shared/seeds/001_*.txt): Available = total × 0.85 (a 15 % buffer); Memory per
 * sample = current memory used / current batch; Max batch = Available / memory per sample. Its
 * worked example: 256 samples using 10.35 GB of 16 GB give 13.6 / 0.0404 ≈ 336. Kept as the seed
 * wrote it so the report can show how far the rule is from the measured answer; it assumes all
 * memory scales with the batch (weights and optimizer state do not), so it errs on the high side.
 */
import { UserError } from "../errors.js";

/** The seed's "leave 15% buffer". */
const SEED_USABLE_FRACTION = 0.85;

interface ScaledRuleInput {
  currentBatch: number;
  currentBytes: number;
  totalBytes: number;
  usableFraction?: number;
}

interface ScaledRuleResult {
  maxBatch: number;
  perSampleBytes: number;
  formula: string;
}

const gb = (bytes: number): string => `${Number((bytes / 1e9).toPrecision(4))} GB`;

export function scaledRule(input: ScaledRuleInput): ScaledRuleResult {
  const fraction = input.usableFraction ?? SEED_USABLE_FRACTION;
  if (!Number.isInteger(input.currentBatch) || input.currentBatch < 1)
    throw new UserError(`the current batch must be a positive integer, got ${input.currentBatch}`);
  if (!(input.currentBytes > 0))
    throw new UserError(`the memory the current batch used must be positive, got ${input.currentBytes}`);
  if (!(input.totalBytes > 0))
    throw new UserError(`the device's total memory must be positive, got ${input.totalBytes}`);
  if (!(fraction > 0 && fraction <= 1))
    throw new UserError(`the usable fraction must be in (0, 1], got ${fraction}`);
  const available = input.totalBytes * fraction;
  const perSampleBytes = input.currentBytes / input.currentBatch;
  const maxBatch = Math.floor(available / perSampleBytes);
  return {
    maxBatch,
    perSampleBytes: Math.ceil(perSampleBytes),
    formula:
      `Available = ${gb(input.totalBytes)} × ${fraction} = ${gb(available)}; ` +
      `per sample = ${gb(input.currentBytes)} / ${input.currentBatch} = ${gb(perSampleBytes)}; ` +
      `max batch = ${gb(available)} / ${gb(perSampleBytes)} = ${maxBatch} (seed 001's rule)`,
  };
}
