/**
 * The measured search for the largest batch: double from the smallest until a trial fails or the
 * range ends, then bisect between the last pass and the first failure. Every trial is a fresh
 * process (the runner's job), so no fragmentation or leaked block of one trial reaches the next.
 * A trial passes when it ran without running out of memory AND its device use (the process's
 * nvidia-smi figure, or reserved + context) stays under (1 - margin) of the card. The answer is
 * then confirmed by a longer run; if that fails, the search steps down to the next passing batch.
 */
import type { MeasuredTrial } from "./types.js";

export interface TrialOutcome extends MeasuredTrial {
  /** The process's own use on the GPU (context + reserved), when nvidia-smi showed it. */
  processUsedBytes?: number | null;
}

export type TrialRunner = (batch: number, steps: number) => Promise<TrialOutcome>;

export interface SearchOptions {
  batchMin: number;
  batchMax: number;
  totalBytes: number;
  marginFraction: number;
  /** Added to peak reserved where a trial has no process figure (the CUDA context). */
  contextBytes: number;
  steps: number;
  confirmSteps: number;
  /** The estimate's largest batch: tried first with its neighbours; null: doubling from batchMin. */
  start?: number | null;
}

export interface SearchResult {
  trials: (TrialOutcome & { purpose: "search" | "confirm"; passed: boolean })[];
  maxBatch: number | null;
  confirmed: boolean;
  bestThroughputBatch: number | null;
  notes: string[];
}

export function deviceUseOf(trial: TrialOutcome, contextBytes: number): number | null {
  if (trial.processUsedBytes) return trial.processUsedBytes;
  return trial.peakReservedBytes === null ? null : trial.peakReservedBytes + contextBytes;
}

export function trialPasses(
  trial: TrialOutcome,
  options: Pick<SearchOptions, "totalBytes" | "marginFraction" | "contextBytes">,
): boolean {
  if (trial.status !== "ok") return false;
  const used = deviceUseOf(trial, options.contextBytes);
  return used !== null && used <= (1 - options.marginFraction) * options.totalBytes;
}

export async function measuredSearch(run: TrialRunner, options: SearchOptions): Promise<SearchResult> {
  const trials: SearchResult["trials"] = [];
  const notes: string[] = [];
  const results = new Map<number, boolean>();
  const attempt = async (batch: number, purpose: "search" | "confirm", steps: number): Promise<boolean> => {
    const trial = await run(batch, steps);
    const passed = trialPasses(trial, options);
    trials.push({ ...trial, purpose, passed });
    if (purpose === "search") results.set(batch, passed);
    if (trial.status === "ok" && !passed)
      notes.push(
        `batch ${batch} ran but used more than ${Math.round((1 - options.marginFraction) * 100)} % of the card`,
      );
    return passed;
  };

  const { lastPass } =
    options.start !== undefined && options.start !== null
      ? await searchFromEstimate(attempt, options, options.start)
      : await searchByDoubling(attempt, options);

  // The answer must hold for a longer run; step down through the passing batches if it does not.
  let confirmed = false;
  let answer: number | null = lastPass;
  const passing = [...results.entries()]
    .filter(([, ok]) => ok)
    .map(([b]) => b)
    .sort((a, b) => b - a);
  for (let tries = 0; answer !== null && tries < 3; tries++) {
    if (await attempt(answer, "confirm", options.confirmSteps)) {
      confirmed = true;
      break;
    }
    notes.push(`batch ${answer} failed its ${options.confirmSteps}-step confirmation run: stepping down`);
    const current: number = answer;
    answer = passing.find((b) => b < current) ?? null;
  }
  if (answer !== null && !confirmed) answer = null;

  let best: number | null = null;
  let bestMsPerSample = Infinity;
  for (const trial of trials) {
    if (!trial.passed || trial.stepMs === null || (answer !== null && trial.batch > answer)) continue;
    const perSample = trial.stepMs / trial.batch;
    if (perSample < bestMsPerSample) {
      bestMsPerSample = perSample;
      best = trial.batch;
    }
  }
  return { trials, maxBatch: answer, confirmed, bestThroughputBatch: best, notes };
}

type Attempt = (batch: number, purpose: "search" | "confirm", steps: number) => Promise<boolean>;

/** Bisect between a passing and a failing batch (lo passes, hi fails). */
async function bisect(attempt: Attempt, steps: number, lo: number, hi: number): Promise<number> {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await attempt(mid, "search", steps)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Double from the smallest batch until a trial fails or the range ends, then bisect. */
async function searchByDoubling(attempt: Attempt, o: SearchOptions): Promise<{ lastPass: number | null }> {
  let lastPass: number | null = null;
  for (let batch = o.batchMin; ;) {
    if (!(await attempt(batch, "search", o.steps)))
      return { lastPass: lastPass === null ? null : await bisect(attempt, o.steps, lastPass, batch) };
    lastPass = batch;
    if (batch >= o.batchMax) return { lastPass };
    batch = Math.min(batch * 2, o.batchMax);
  }
}

/**
 * Start at the estimate's answer and its neighbour: when the estimate is right, two trials settle
 * it (the answer passes, the next batch fails). Where they disagree, widen in steps that double
 * away from the estimate until the pass/fail edge is bracketed, then bisect.
 */
async function searchFromEstimate(
  attempt: Attempt,
  o: SearchOptions,
  estimate: number,
): Promise<{ lastPass: number | null }> {
  const start = Math.min(o.batchMax, Math.max(o.batchMin, estimate));
  if (await attempt(start, "search", o.steps)) {
    let pass = start;
    for (let step = 1; pass < o.batchMax; step *= 2) {
      const next = Math.min(o.batchMax, pass + step);
      if (!(await attempt(next, "search", o.steps)))
        return { lastPass: await bisect(attempt, o.steps, pass, next) };
      pass = next;
    }
    return { lastPass: pass };
  }
  let fail = start;
  for (let step = 1; fail > o.batchMin; step *= 2) {
    const next = Math.max(o.batchMin, fail - step);
    if (await attempt(next, "search", o.steps))
      return { lastPass: await bisect(attempt, o.steps, next, fail) };
    fail = next;
  }
  return { lastPass: null };
}
