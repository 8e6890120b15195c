/**
 * `estimateMemory`: will a training step fit on a GPU, and the largest batch that does. The core of
 * `gpuprep memory` (the CLI parses, calls this, renders, sets the exit code) and of the library.
 *
 * Tiers, in order: the trace tier (one step of the real model on fake tensors in the target Python,
 * its allocations replayed through a model of the caching allocator); where the trace cannot follow
 * the model, or the Python has no torch >= 2.5, the formula tier (the model's exact parameters from
 * a meta-device build where torch imports, its block structure from config.json). Every tier
 * searches the batch range for verdict.maxBatch. `--measure` then runs real steps, starting at the
 * estimate's answer; seed 001's rule scales a batch that already ran.
 */
import { UserError } from "../errors.js";
import { payloadErrorKinds } from "../transports/payload-frame.js";
import type { Transport } from "../transports/types.js";
import { formulaEstimate } from "./formula.js";
import { genericModelConfig, groupsFromMeta } from "./generic-config.js";
import { SUPPORTED_MODEL_TYPES, modelConfigFromJson, type ModelConfig } from "./hf-config.js";
import {
  failureAsUserError,
  runMemoryPayload,
  runPidMemory,
  type MemoryRequest,
  type TraceFallback,
  type TraceSearchRequest,
  type TraceResult,
  type TrialResult,
} from "./payload.js";
import type { MemoryAlternative, MemoryReport } from "./report-types.js";
import { scaledRule as seedRule } from "./scaled-rule.js";
import { measuredSearch, type TrialOutcome } from "./search.js";
import { fromInProcessSearch, traceMaxBatch } from "./trace-search.js";
import { TRACE_TORCH_NEEDED, contextForTrace, traceEstimate } from "./trace-tier.js";
import { defaultCalibration } from "./calibration.js";
import { verdictFor } from "./budget.js";
import type { DeviceBudget, MemoryEstimate, ModelSource, WorkSpec } from "./types.js";

/** Traced steps the in-process search's time limit allows for (each gets --timeout). */
const SEARCH_TRACES = 4;
/** The range searched for the largest batch when one batch is asked (issue 24: never the batch asked). */
export const DEFAULT_SEARCH = { min: 1, max: 1024 } as const;

export interface BatchRequest {
  min: number;
  max: number;
  /** A range was asked (A..B); otherwise one batch, judged as asked, the largest searched in 1..1024. */
  range: boolean;
}

export interface EstimateInput {
  source: ModelSource & { data?: Record<string, unknown> };
  work: WorkSpec;
  batch: BatchRequest;
  tier: "trace" | "formula" | "auto";
  device: DeviceBudget;
  transport: Transport;
  /** Seconds per traced step or trial (default 600 / 300). */
  timeoutS?: number | null;
  measure?: boolean;
  trialDevice?: "cuda" | "cpu";
  /** Seed 001's rule: a batch that ran, and its memory (bytes) or the PID to ask nvidia-smi about. */
  seedRule?: { currentBatch: number; currentBytes: number | null; pid: number | null } | null;
}

class TraceUnavailable extends Error {
  constructor(
    readonly detail: string,
    readonly fallback: TraceFallback | null,
  ) {
    super(detail);
  }
}

export async function estimateMemory(input: EstimateInput): Promise<MemoryReport> {
  const { work, device, source } = input;
  const range = input.batch.range ? { min: input.batch.min, max: input.batch.max } : { ...DEFAULT_SEARCH };
  const notes: string[] = [];
  const found = await estimatesFor(input, range, notes);
  const estimates = found.estimates;
  let maxBatch = found.maxBatch;

  const measured = input.measure ? await measure(input, range, measureFrom(found), estimates, notes) : null;
  const scaled = await scaledRuleFor(input, measured?.maxBatch ?? null);
  if (estimates.length === 0 && scaled !== null) estimates.push(scaledEstimate(scaled, 0));
  if (estimates.length === 0) {
    const first = measured?.trials[0];
    throw new UserError(
      `memory: no batch passed on the GPU and no estimate was possible${first?.error ? ` (batch ${first.batch}: ${first.error})` : ""}`,
      `the trace tier needs ${TRACE_TORCH_NEEDED} in the target Python`,
    );
  }
  const measuredEstimateShown = estimates.find((e) => e.tier === "measured");
  if (measuredEstimateShown) maxBatch = measured?.maxBatch ?? null;
  else if (estimates[0]?.tier === "scaled-rule") maxBatch = scaled?.maxBatch ?? null;
  const shown = measuredEstimateShown ?? shownEstimate(estimates, input.batch, maxBatch);
  const verdict = verdictFor(shown, device, maxBatch);
  const parameterCount = estimates.find((e) => e.parameterCount > 0)?.parameterCount ?? 0;
  return {
    model: { source: stripData(source), name: modelName(source), parameterCount },
    work,
    device,
    estimates,
    verdict,
    trials: measured?.trials ?? [],
    measuredMaxBatch: measured?.maxBatch ?? null,
    bestThroughputBatch: measured?.bestThroughputBatch ?? null,
    scaledRule: scaled,
    searchRange: range,
    traceFallback: found.fallbackReason,
    alternatives: verdict.fits ? [] : alternativesFor(found.formulaModel, work, shown, device),
    notes: [...notes, ...(measured?.notes ?? [])],
  };
}

interface Found {
  estimates: MemoryEstimate[];
  maxBatch: number | null;
  /** Where --measure starts: the allocator model's own edge (no safety share) where the trace gave it. */
  measureStart?: number | null;
  fallbackReason: string | null;
  formulaModel: ModelConfig | null;
}

/** The trace tier where it can run, else the formula tier; each searches the range. */
async function estimatesFor(
  input: EstimateInput,
  range: { min: number; max: number },
  notes: string[],
): Promise<Found> {
  const asked = input.batch.min;
  let fallback: TraceFallback | null = null;
  let fallbackReason: string | null = null;
  if (input.tier !== "formula") {
    try {
      const traced = await traceSearch(input, range, notes);
      return { ...traced, fallbackReason: null, formulaModel: formulaModelOrNull(input, null) };
    } catch (error) {
      if (!(error instanceof TraceUnavailable)) throw error;
      if (input.tier === "trace" && error.fallback === null)
        throw new UserError(
          `memory: the trace tier needs ${TRACE_TORCH_NEEDED} in ${input.transport.describe()}: ${error.detail}`,
          "pass --python PATH to a newer torch, or --tier formula",
        );
      fallback = error.fallback;
      fallbackReason = error.fallback
        ? `the trace could not follow ${error.fallback.modelClass}: ${error.fallback.reason}`
        : `trace tier not available: ${error.detail}`;
      notes.push(`${fallbackReason}; the formula tier answers`);
    }
  }
  if (input.source.kind === "factory" && fallback === null) {
    if (input.measure || input.seedRule)
      return { estimates: [], maxBatch: null, fallbackReason, formulaModel: null };
    throw new UserError(
      `memory: no estimate: the trace tier needs ${TRACE_TORCH_NEEDED} in the target Python, and the formula tier needs a config.json, not a factory`,
      "pass --python PATH to an environment with torch >= 2.5",
    );
  }
  const model = formulaModel(input, fallback);
  const estimateAt = (batch: number) =>
    withFallbackContext(formulaEstimate(model, input.work, batch), fallback);
  const maxBatch = largestFitting((b) => estimateAt(b).totalBytes, input.device.usableBytes, range);
  const batches = [
    ...new Set([
      asked,
      range.min,
      ...(maxBatch !== null ? [maxBatch, Math.min(range.max, maxBatch + 1)] : []),
    ]),
  ];
  const estimates = curveBatches(batches, range).map(estimateAt);
  if ("approximateParameters" in model && model.approximateParameters)
    estimates.forEach((e) =>
      e.notes.push(
        "parameters counted from config fields (approximate): no torch to build the model on the meta device",
      ),
    );
  return { estimates, maxBatch, fallbackReason, formulaModel: model };
}

/** Where --measure starts: the allocator model's own edge where the trace gave it, else the answer. */
function measureFrom(found: Found): { start: number | null; estimated: number | null } {
  return { start: found.measureStart ?? found.maxBatch, estimated: found.maxBatch };
}

/** The batches to show: the asked one, the answer and its neighbour, and a spread for the chart. */
function curveBatches(batches: number[], range: { min: number; max: number }): number[] {
  const spread: number[] = [];
  for (let b = range.min; b <= range.max; b *= 2) spread.push(b);
  return [...new Set([...batches, ...spread, range.max])].filter((b) => b >= 1).sort((a, b) => a - b);
}

/** The largest batch in the range whose total fits (totals grow with the batch); null if the smallest does not. */
export function largestFitting(
  totalAt: (batch: number) => number,
  usable: number,
  range: { min: number; max: number },
): number | null {
  if (usable <= 0 || totalAt(range.min) > usable) return null;
  if (totalAt(range.max) <= usable) return range.max;
  let lo = range.min;
  let hi = range.max;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (totalAt(mid) <= usable) lo = mid;
    else hi = mid;
  }
  return lo;
}

async function traceSearch(
  input: EstimateInput,
  range: { min: number; max: number },
  notes: string[],
): Promise<{ estimates: MemoryEstimate[]; maxBatch: number | null; measureStart?: number | null }> {
  const timeoutMs = (input.timeoutS ?? 600) * 1000;
  const capacity = allocatorCapacity(input.device);
  const request = (batch: number, search?: TraceSearchRequest): MemoryRequest => ({
    ...input.work,
    source: input.source,
    mode: "trace",
    batch,
    allocatorCapacityBytes: capacity,
    ...(search ? { search } : {}),
  });
  const traceAt = async (batch: number): Promise<MemoryEstimate> =>
    traceEstimate(await traceOnce(input.transport, request(batch), timeoutMs), input.device.name);
  if (input.device.usableBytes <= 0) return { estimates: [await traceAt(input.batch.min)], maxBatch: null };
  // One process traces the batch asked and searches the range (two more traces, the rest
  // interpolated, the answer traced to check): one import of torch and one build of the model.
  const c = defaultCalibration();
  const shown = curveBatches([], range);
  const started = Date.now();
  // For a range from 1 the search traces 2 and 3 (batch 1 often takes other code paths, so it
  // rarely pairs with 2) and interpolates 1 like any other batch.
  const firstBatch = input.batch.range && range.min === 1 && range.max >= 3 ? 2 : input.batch.min;
  const first = await traceOnce(
    input.transport,
    request(firstBatch, {
      min: range.min,
      max: range.max,
      usableBytes: input.device.usableBytes,
      contextBytes: contextForTrace({ torch: { version: "" }, gpu: null }, input.device.name, c).bytes,
      safetyFraction: c.allocatorSafetyFraction.value,
      convolutionFraction: c.convolutionWorkspaceFraction.value,
      curve: shown,
    }),
    // --timeout is per traced step; the search traces three as a rule (four where batch 1 pairs badly).
    timeoutMs * SEARCH_TRACES,
  );
  const searched = fromInProcessSearch(first, input.device.usableBytes, range, input.device.name, shown);
  const seconds = Math.round((Date.now() - started) / 1000);
  if (searched) {
    const s = first.search;
    const each = s?.traceSeconds
      ? ` (each step ${s.traceSeconds.map((t) => t.toFixed(1)).join(", ")} s)`
      : "";
    notes.push(
      `trace search: ${s?.traces ?? 1} traced batches in ${seconds} s${each}${s?.interpolatedFrom ? `, the others interpolated from batches ${s.interpolatedFrom.join(" and ")}` : ""}`,
    );
    return { ...searched, measureStart: searched.likelyMaxBatch };
  }
  const why =
    typeof first["searchError"] === "string"
      ? `stopped (${first["searchError"]})`
      : "gave an answer that did not hold by this gpuprep's totals";
  notes.push(`trace search: the in-process search ${why}; traced batch by batch`);
  // The batch asked is traced with the search's first two, at once.
  const found = await traceMaxBatch(traceAt, input.device.usableBytes, range.min, range.max, [
    input.batch.min,
  ]);
  return { estimates: found.estimates, maxBatch: found.maxBatch };
}

/** What the caching allocator can reach: the card less the driver's reserve and the CUDA context. */
function allocatorCapacity(device: DeviceBudget): number | null {
  if (device.totalBytes <= 0 || device.unified) return null;
  const c = defaultCalibration();
  const context = contextForTrace({ torch: { version: "" }, gpu: null }, device.name, c).bytes;
  return Math.max(0, device.totalBytes - c.driverReservedBytes.value - context);
}

async function traceOnce(
  transport: Transport,
  request: MemoryRequest,
  timeoutMs: number,
): Promise<TraceResult> {
  const outcome = await runMemoryPayload(transport, request, timeoutMs);
  if (outcome.kind === "ok") return outcome.result as TraceResult;
  if (outcome.kind === "fallback") throw new TraceUnavailable(outcome.fallback.reason, outcome.fallback);
  if (outcome.kind === "no-result") {
    if (outcome.timedOut)
      throw new UserError(
        `memory: tracing batch ${request.batch} in ${transport.describe()} ${outcome.reason}`,
        "give it more time with --timeout SECONDS, or --tier formula",
      );
    throw new UserError(
      `memory: tracing batch ${request.batch} in ${transport.describe()} ${outcome.reason}`,
      "the payload needs Python >= 3.8",
    );
  }
  const failure = outcome.failure;
  if (failure.status === "unsupported" || failure.errorKind === "no-torch")
    throw new TraceUnavailable(failure.error, null);
  throw failureAsUserError(failure, transport.describe());
}

function formulaModelOrNull(input: EstimateInput, fallback: TraceFallback | null): ModelConfig | null {
  try {
    return input.source.kind === "factory" ? null : formulaModel(input, fallback);
  } catch {
    return null;
  }
}

/** The formula tier's model: the exact reader for its family, else the generic one (meta-device parameters when given). */
function formulaModel(input: EstimateInput, fallback: TraceFallback | null): ModelConfig {
  const raw = input.source.kind === "factory" ? null : (input.source.data ?? null);
  if (raw === null)
    throw new UserError(
      "memory: the formula tier needs the model's config.json",
      "the trace tier sizes factories: a Python with torch >= 2.5",
    );
  const file = input.source.kind === "factory" ? input.source.spec : input.source.path;
  const type = typeof raw["model_type"] === "string" ? raw["model_type"] : "";
  if ((SUPPORTED_MODEL_TYPES as readonly string[]).includes(type)) {
    try {
      return modelConfigFromJson(raw, file);
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
    }
  }
  const architectures = raw["architectures"];
  const architecture =
    Array.isArray(architectures) && typeof architectures[0] === "string"
      ? architectures[0]
      : (fallback?.modelClass ?? "");
  const meta = fallback ? groupsFromMeta(fallback.parameters) : null;
  return genericModelConfig(raw, file, meta, architecture);
}

function withFallbackContext(estimate: MemoryEstimate, fallback: TraceFallback | null): MemoryEstimate {
  if (fallback === null) return estimate;
  return {
    ...estimate,
    parameterCount: fallback.parameterCount,
    trainableParameterCount: fallback.trainableParameterCount,
    notes: [...estimate.notes, `parameters exact from ${fallback.modelClass} built on the meta device`],
  };
}

/** The estimate the verdict is about: the one batch asked, or for a range the largest that fits (else the smallest). */
function shownEstimate(
  estimates: MemoryEstimate[],
  batch: BatchRequest,
  maxBatch: number | null,
): MemoryEstimate {
  const at = (b: number | null) => (b === null ? undefined : estimates.find((e) => e.batch === b));
  const wanted = batch.range ? (at(maxBatch) ?? at(batch.min)) : at(batch.min);
  return wanted ?? (estimates[0] as MemoryEstimate);
}

/** Single changes that would fit, each at the smallest batch searched, by the formula tier scaled to the shown figure. */
function alternativesFor(
  model: ModelConfig | null,
  work: WorkSpec,
  shown: MemoryEstimate,
  device: DeviceBudget,
): MemoryAlternative[] {
  if (model === null || device.usableBytes <= 0) return [];
  const batch = shown.batch;
  const base = safeFormula(model, work, batch);
  if (base === null) return [];
  const scale = shown.totalBytes / base.totalBytes;
  const lora = { rank: 16, alpha: 32, dropout: 0.05, targets: [] };
  const options: [string, WorkSpec, number][] = [
    ["--grad-checkpointing", { ...work, gradCheckpointing: true }, batch],
    ["--optimizer adamw8bit", { ...work, optimizer: "adamw8bit" }, batch],
    [
      "--task finetune-lora --dtype bfloat16",
      { ...work, task: "finetune-lora", dtype: "bfloat16", lora },
      batch,
    ],
    ["--task finetune-qlora", { ...work, task: "finetune-qlora", dtype: "bfloat16", lora }, batch],
  ];
  if (batch > 1)
    options.push([`--batch ${Math.max(1, Math.floor(batch / 2))}`, work, Math.max(1, Math.floor(batch / 2))]);
  if (work.seqLen !== null && work.seqLen > 128)
    options.push([`--seq-len ${work.seqLen / 2}`, { ...work, seqLen: Math.floor(work.seqLen / 2) }, batch]);
  const out: MemoryAlternative[] = [];
  for (const [change, changed, b] of options) {
    if (work.task === changed.task && change.startsWith("--task")) continue;
    const e = safeFormula(model, changed, b);
    if (e === null) continue;
    const totalBytes = Math.round(e.totalBytes * scale);
    out.push({ change, totalBytes, batch: b, fits: totalBytes <= device.usableBytes });
  }
  return out;
}

function safeFormula(model: ModelConfig, work: WorkSpec, batch: number): MemoryEstimate | null {
  try {
    return formulaEstimate(model, work, batch);
  } catch {
    return null;
  }
}

async function measure(
  input: EstimateInput,
  range: { min: number; max: number },
  from: { start: number | null; estimated: number | null },
  estimates: MemoryEstimate[],
  notes: string[],
) {
  const estimatedMax = from.start;
  const times: string[] = [];
  const runTrial = timedTrials(input, times);
  const context = contextForTrace({ torch: { version: "" }, gpu: null }, input.device.name).bytes;
  const started = Date.now();
  const search = await measuredSearch(runTrial, {
    batchMin: range.min,
    batchMax: range.max,
    totalBytes: input.device.totalBytes > 0 ? input.device.totalBytes : Number.MAX_SAFE_INTEGER,
    marginFraction: input.device.marginFraction,
    contextBytes: context,
    steps: 3,
    confirmSteps: 20,
    start: estimatedMax,
    perSampleBytes: allocatedPerSample(estimates, estimatedMax),
    // The estimate's edge is tried with the confirmation's 20 steps: when it holds, its neighbour
    // failing settles the search in two trials.
    firstConfirm: estimatedMax !== null,
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  notes.push(
    `measured search: ${search.trials.length} trial${search.trials.length === 1 ? "" : "s"} in ${seconds} s${estimatedMax === null ? ", doubling from the smallest batch (no estimate to start from)" : estimatedMax === from.estimated ? `, starting at the estimate's ${estimatedMax}` : `, starting at ${estimatedMax}, where the allocator model reaches the limit without the estimate's safety share (the estimate's answer: ${from.estimated})`} (${times.join(", ")})`,
  );
  const confirm = search.trials.find(
    (t) => t.purpose === "confirm" && t.passed && t.batch === search.maxBatch,
  );
  const parameterCount = estimates.find((e) => e.parameterCount > 0)?.parameterCount ?? 0;
  if (confirm) estimates.unshift(measuredEstimate(confirm, parameterCount, context));
  return {
    trials: search.trials.map(({ batch, status, peakAllocatedBytes, peakReservedBytes, stepMs, error }) => ({
      batch,
      status,
      peakAllocatedBytes,
      peakReservedBytes,
      stepMs,
      error,
    })),
    maxBatch: search.maxBatch,
    bestThroughputBatch: search.bestThroughputBatch,
    notes: search.notes,
  };
}

/**
 * The estimate's growth of allocated memory per sample, from its two batches farthest apart up to
 * just past its answer (batch 1 left out where others exist: it often takes other code paths).
 */
function allocatedPerSample(estimates: MemoryEstimate[], upTo: number | null): number | null {
  const points = estimates
    .filter((e) => (e.tier === "trace" || e.tier === "formula") && (upTo === null || e.batch <= upTo + 1))
    .sort((a, b) => a.batch - b.batch);
  const first = points.find((e) => e.batch >= 2) ?? points[0];
  const last = points[points.length - 1];
  if (!first || !last || last.batch === first.batch) return null;
  const rate = (last.peakAllocatedBytes - first.peakAllocatedBytes) / (last.batch - first.batch);
  return rate > 0 ? rate : null;
}

/** Runs one trial each call, a fresh process, and notes its wall time ("41 x 20 steps 23.1 s"). */
function timedTrials(input: EstimateInput, times: string[]) {
  const timeoutMs = (input.timeoutS ?? 300) * 1000;
  return async (batch: number, steps: number): Promise<TrialOutcome> => {
    const began = Date.now();
    const request: MemoryRequest = {
      ...input.work,
      source: input.source,
      mode: "trial",
      batch,
      steps,
      device: input.trialDevice ?? "cuda",
    };
    const outcome = await trialOnce(input.transport, request, timeoutMs);
    times.push(`${batch} x ${steps} steps ${((Date.now() - began) / 1000).toFixed(1)} s`);
    return outcome;
  };
}

/** One trial; batch-dependent failures (OOM, a hang, a crash) are results, input errors stop the search. */
async function trialOnce(
  transport: Transport,
  request: MemoryRequest,
  timeoutMs: number,
): Promise<TrialOutcome> {
  const outcome = await runMemoryPayload(transport, request, timeoutMs);
  const empty = { batch: request.batch, peakAllocatedBytes: null, peakReservedBytes: null, stepMs: null };
  if (outcome.kind === "no-result")
    return { ...empty, status: outcome.timedOut ? "timeout" : "error", error: outcome.reason };
  if (outcome.kind === "fallback") return { ...empty, status: "error", error: outcome.fallback.reason };
  if (outcome.kind === "failed") {
    // Input errors stop the search (src/probe/payload-errors.json, the table memory.py reads too).
    if (payloadErrorKinds()[outcome.failure.errorKind ?? ""]?.input === true)
      throw failureAsUserError(outcome.failure, transport.describe());
    return { ...empty, status: "error", error: outcome.failure.error };
  }
  const r = outcome.result as TrialResult;
  return {
    batch: r.batch,
    status: r.status,
    peakAllocatedBytes: r.peakAllocatedBytes ?? null,
    peakReservedBytes: r.peakReservedBytes ?? null,
    stepMs: r.stepMs ?? null,
    error: r.error,
    processUsedBytes: r.processUsedBytes ?? null,
  };
}

/** The confirmed trial as an estimate (tier "measured"): what the allocator and the device really held. */
function measuredEstimate(trial: TrialOutcome, parameterCount: number, contextBytes: number): MemoryEstimate {
  const allocated = trial.peakAllocatedBytes ?? 0;
  const reserved = trial.peakReservedBytes ?? allocated;
  const context = trial.processUsedBytes ? Math.max(0, trial.processUsedBytes - reserved) : contextBytes;
  return {
    tier: "measured",
    batch: trial.batch,
    peakAllocatedBytes: allocated,
    totalBytes: reserved + context,
    // Real steps show the peak, not who held it: all of it is listed as activations.
    breakdown: {
      parameters: 0,
      gradients: 0,
      optimizerState: 0,
      activations: allocated,
      temporaries: 0,
      cudaContext: context,
      allocatorOverhead: reserved - allocated,
    },
    parameterCount,
    trainableParameterCount: 0,
    accuracy: null,
    notes: ["measured: the peak of real steps, not split by what held it"],
  };
}

async function scaledRuleFor(
  input: EstimateInput,
  measuredMax: number | null,
): Promise<MemoryReport["scaledRule"]> {
  const rule = input.seedRule;
  if (!rule || input.device.totalBytes <= 0) return null;
  const currentBytes =
    rule.pid !== null ? await runPidMemory(input.transport, rule.pid) : Math.round(rule.currentBytes ?? 0);
  const result = seedRule({
    currentBatch: rule.currentBatch,
    currentBytes,
    totalBytes: input.device.totalBytes,
  });
  return {
    currentBatch: rule.currentBatch,
    currentBytes,
    currentSource: rule.pid !== null ? `nvidia-smi, pid ${rule.pid}` : "--current-memory",
    ...result,
    offFromMeasuredPct: measuredMax
      ? Math.round(((result.maxBatch - measuredMax) / measuredMax) * 1000) / 10
      : null,
  };
}

/** Seed 001's rule as the only estimate: the batch that ran, at the memory it used. */
function scaledEstimate(
  rule: NonNullable<MemoryReport["scaledRule"]>,
  parameterCount: number,
): MemoryEstimate {
  return {
    tier: "scaled-rule",
    batch: rule.currentBatch,
    peakAllocatedBytes: rule.currentBytes,
    totalBytes: rule.currentBytes,
    breakdown: {
      parameters: 0,
      gradients: 0,
      optimizerState: 0,
      activations: rule.currentBytes,
      temporaries: 0,
      cudaContext: 0,
      allocatorOverhead: 0,
    },
    parameterCount,
    trainableParameterCount: 0,
    accuracy: null,
    notes: [`the memory batch ${rule.currentBatch} used (${rule.currentSource}), not split by what held it`],
  };
}

function stripData(source: ModelSource & { data?: unknown }): ModelSource {
  const { data: _data, ...rest } = source;
  return rest;
}

function modelName(source: ModelSource): string {
  if (source.kind === "factory") return source.spec;
  if (source.kind === "hf-cache") return source.name;
  return source.path;
}
