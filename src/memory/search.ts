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

type TrialRunner = (batch: number, steps: number) => Promise<TrialOutcome>;

interface SearchOptions {
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
  /** The estimate's growth of allocated memory per sample: with a trial's real use it predicts the edge. */
  perSampleBytes?: number | null;
  /** Trials at most before the search gives its best confirmed answer (default 24). */
  maxTrials?: number;
  /** The estimate's batch is tried first with the confirmation's steps (a pass is then the answer's own confirmation). */
  firstConfirm?: boolean;
}

interface SearchResult {
  trials: (TrialOutcome & { purpose: "search" | "confirm"; passed: boolean })[];
  maxBatch: number | null;
  confirmed: boolean;
  bestThroughputBatch: number | null;
  notes: string[];
}

function deviceUseOf(trial: TrialOutcome, contextBytes: number): number | null {
  if (trial.processUsedBytes) return trial.processUsedBytes;
  return trial.peakReservedBytes === null ? null : trial.peakReservedBytes + contextBytes;
}

function trialPasses(
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

  if (options.start !== undefined && options.start !== null) {
    const answer = await searchFromEstimate(attempt, options, options.start, trials, notes);
    return finish(trials, answer, notes);
  }
  const { lastPass } = await searchByDoubling(attempt, options);

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
  return finish(trials, answer, notes);
}

function finish(trials: SearchResult["trials"], answer: number | null, notes: string[]): SearchResult {
  const confirmed =
    answer !== null && trials.some((t) => t.purpose === "confirm" && t.passed && t.batch === answer);
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
  return { trials, maxBatch: confirmed ? answer : null, confirmed, bestThroughputBatch: best, notes };
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
 * Start at the estimate's answer. From a trial that passed, its real device use and the
 * estimate's growth per sample predict the edge p: the next batch above p is tried (3 steps) and,
 * when it fails, p itself is confirmed (20 steps) - a right estimate costs the estimate, its
 * neighbour and the confirmation; a wrong one a prediction more. Without a growth per sample, or
 * where predictions stall, it widens in doubling steps away from the estimate and bisects. A
 * failed confirmation counts as a failure at that batch and the search goes on below it.
 */
async function searchFromEstimate(
  attempt: Attempt,
  o: SearchOptions,
  estimate: number,
  trials: SearchResult["trials"],
  notes: string[],
): Promise<number | null> {
  const search = new EdgeSearch(attempt, o, trials, notes);
  const first = Math.min(o.batchMax, Math.max(o.batchMin, estimate));
  await (o.firstConfirm ? search.confirm(first) : search.probe(first));
  for (let n = 0; n < (o.maxTrials ?? 24); n++) {
    const done = await search.step();
    if (done) return search.answer();
  }
  return search.answer();
}

/** The state of the search from an estimate: the largest passing batch, the smallest failing one. */
class EdgeSearch {
  private readonly passed = new Map<number, TrialOutcome>();
  private lo: number | null = null;
  private hi: number;
  private widen = 1;
  private predictions = 0;
  private readonly limit: number;

  constructor(
    private readonly attempt: Attempt,
    private readonly o: SearchOptions,
    private readonly trials: SearchResult["trials"],
    private readonly notes: string[],
  ) {
    this.hi = o.batchMax + 1;
    this.limit = (1 - o.marginFraction) * o.totalBytes;
  }

  async probe(batch: number): Promise<void> {
    this.record(batch, await this.attempt(batch, "search", this.o.steps));
  }

  async confirm(batch: number): Promise<void> {
    const ok = await this.attempt(batch, "confirm", this.o.confirmSteps);
    if (!ok)
      this.notes.push(
        `batch ${batch} failed its ${this.o.confirmSteps}-step confirmation run: searching below it`,
      );
    this.record(batch, ok);
  }

  answer(): number | null {
    return this.lo !== null && this.isConfirmed(this.lo) ? this.lo : null;
  }

  /** One trial more; true when the search is over (answer() has the result). */
  async step(): Promise<boolean> {
    const { lo, hi } = this;
    if (lo !== null && lo + 1 >= hi) {
      if (this.isConfirmed(lo)) return true;
      await this.confirm(lo);
      return false;
    }
    if (lo === null && hi <= this.o.batchMin) return true;
    const predicted = this.predictions++ >= 3 ? null : this.predict(lo, hi);
    if (predicted === null) {
      await this.probe(this.widened(lo, hi));
      return false;
    }
    const known = lo ?? this.o.batchMin - 1;
    const edge = Math.max(known, Math.min(hi - 1, predicted));
    if (edge <= known) await this.probe(known + 1);
    else if (edge + 1 >= hi) await this.confirm(edge);
    else await this.probe(edge + 1);
    return false;
  }

  /** From the largest passing trial, or from the smallest failing one that ran (its use known). */
  private predict(lo: number | null, hi: number): number | null {
    if (lo === null) return predictBelow(this.trials, hi, this.limit, this.o);
    return predictAbove(this.passed.get(lo) as TrialOutcome, ranAt(this.trials, hi), this.limit, this.o);
  }

  /** No growth to predict with, an out-of-memory trial, or predictions that stall: widen, or bisect. */
  private widened(lo: number | null, hi: number): number {
    const step = this.widen;
    this.widen *= 2;
    if (lo === null) return Math.max(this.o.batchMin, hi - step);
    if (hi <= this.o.batchMax) return Math.max(lo + 1, Math.floor((lo + hi) / 2));
    return Math.max(lo + 1, Math.min(this.o.batchMax, lo + step));
  }

  private record(batch: number, ok: boolean): void {
    if (ok) {
      this.passed.set(batch, this.trials[this.trials.length - 1] as TrialOutcome);
      if (this.lo === null || batch > this.lo) this.lo = batch;
      return;
    }
    if (batch >= this.hi) return;
    this.hi = batch;
    for (const b of [...this.passed.keys()]) if (b >= batch) this.passed.delete(b);
    this.lo = this.passed.size ? Math.max(...this.passed.keys()) : null;
  }

  private isConfirmed(batch: number): boolean {
    return this.trials.some((t) => t.purpose === "confirm" && t.passed && t.batch === batch);
  }
}

/**
 * The largest batch whose use stays under the limit: on the line through a passing trial and a
 * failing one that ran (both uses real), else grown from the passing one at the estimate's rate.
 */
function predictAbove(
  pass: TrialOutcome,
  fail: TrialOutcome | null,
  limit: number,
  o: SearchOptions,
): number | null {
  const used = deviceUseOf(pass, o.contextBytes);
  if (used === null) return null;
  const over = fail ? deviceUseOf(fail, o.contextBytes) : null;
  if (fail && over !== null && over > used && fail.batch > pass.batch)
    return pass.batch + Math.floor(((limit - used) * (fail.batch - pass.batch)) / (over - used));
  const rate = realRate(pass, o);
  return rate === null ? null : pass.batch + Math.floor((limit - used) / rate);
}

/** The trial at `batch` that ran to the end (over the limit, not out of memory), if any. */
function ranAt(trials: SearchResult["trials"], batch: number): TrialOutcome | null {
  return trials.find((t) => t.batch === batch && t.status === "ok") ?? null;
}

/** From the smallest failing trial that ran (over the limit, its use known): the batch its use falls under the limit at. */
function predictBelow(
  trials: SearchResult["trials"],
  hi: number,
  limit: number,
  o: SearchOptions,
): number | null {
  const trial = ranAt(trials, hi);
  const used = trial ? deviceUseOf(trial, o.contextBytes) : null;
  const rate = trial ? realRate(trial, o) : null;
  if (!trial || used === null || rate === null) return null;
  return hi - Math.ceil((used - limit) / rate);
}

/** The estimate's allocated growth per sample, scaled by what the allocator reserved per allocated byte there. */
function realRate(trial: TrialOutcome, o: SearchOptions): number | null {
  if (!o.perSampleBytes || o.perSampleBytes <= 0) return null;
  const allocated = trial.peakAllocatedBytes ?? 0;
  const reserved = trial.peakReservedBytes ?? 0;
  return o.perSampleBytes * (allocated > 0 && reserved > allocated ? reserved / allocated : 1);
}
