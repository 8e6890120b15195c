/**
 * The JSON body of `gpuprep memory --json` (inside the "gpuprep.memory" envelope, version 1), as
 * the memory contract fixes it: the HTML renderer and the text report read exactly this shape.
 */
import type {
  DeviceBudget,
  MeasuredTrial,
  MemoryEstimate,
  MemoryVerdict,
  ModelSource,
  WorkSpec,
} from "./types.js";

export const MEMORY_REPORT_SCHEMA = "gpuprep.memory";
export const MEMORY_REPORT_VERSION = 1;

export interface ScaledRuleResult {
  currentBatch: number;
  currentBytes: number;
  /** Where currentBytes came from: "--current-memory" or "nvidia-smi, pid N". */
  currentSource: string;
  maxBatch: number;
  perSampleBytes: number;
  formula: string;
  /** measured max batch minus the rule's, in percent of the measured one; null without --measure. */
  offFromMeasuredPct: number | null;
}

/** What else would fit when the work as asked does not: one change each, estimated by the same tier. */
export interface MemoryAlternative {
  /** The flags that make the change, e.g. "--task finetune-lora" or "--seq-len 512". */
  change: string;
  /** The estimated total on the device with that change, at `batch`. */
  totalBytes: number;
  batch: number;
  fits: boolean;
}

export interface MemoryReport {
  model: { source: ModelSource; name: string; parameterCount: number };
  work: WorkSpec;
  device: DeviceBudget;
  estimates: MemoryEstimate[];
  verdict: MemoryVerdict;
  trials: MeasuredTrial[];
  measuredMaxBatch: number | null;
  bestThroughputBatch: number | null;
  scaledRule: ScaledRuleResult | null;
  /** The batches searched for verdict.maxBatch (the asked range, or 1..1024 for one batch). */
  searchRange: { min: number; max: number };
  /** Where the trace could not follow the model and the formula tier answered: why, in one line. */
  traceFallback: string | null;
  /** For work that does not fit: single changes that would (empty when it fits). */
  alternatives: MemoryAlternative[];
  notes: string[];
}
