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
  notes: string[];
}
