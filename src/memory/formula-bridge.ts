/**
 * The one place `gpuprep memory` calls what the memory-formula work provides (budget.ts,
 * scaled-rule.ts, formula.ts per the memory contract). Those files are not on this branch, so the
 * budget, the verdict and seed 001's rule are computed here in their simplest honest form, and
 * the formula tier reports itself unavailable: when merging, replace each body with a call to the
 * contract's function (deviceBudget, verdictFor, scaledRule, readModelConfig + formulaEstimate).
 */
import type { Facts } from "../facts/schema.js";
import type { DeviceBudget, MemoryEstimate, MemoryVerdict, WorkSpec } from "./types.js";

export interface TargetMemory {
  name: string;
  memoryBytes: number;
  unified: boolean;
  source: string;
}

const MIB = 1024 * 1024;

/** The device's memory and the share a step may use: total less the margin. */
export function budgetFor(
  facts: Facts | null,
  target: TargetMemory | null,
  marginFraction: number,
): DeviceBudget {
  if (target !== null) {
    return {
      name: target.name,
      totalBytes: target.memoryBytes,
      unified: target.unified,
      usableBytes: Math.floor(target.memoryBytes * (1 - marginFraction)),
      marginFraction,
      source: target.source,
    };
  }
  const gpu = facts?.host.nvidia.gpus[0];
  const mib = gpu?.memoryTotalMiB ?? null;
  if (!gpu || mib === null) {
    return {
      name: "no GPU",
      totalBytes: 0,
      unified: false,
      usableBytes: 0,
      marginFraction,
      source: "no GPU seen",
    };
  }
  const total = mib * MIB;
  return {
    name: gpu.name,
    totalBytes: total,
    unified: false,
    usableBytes: Math.floor(total * (1 - marginFraction)),
    marginFraction,
    source: "nvidia-smi memory.total",
  };
}

export function verdictOf(
  estimate: MemoryEstimate,
  budget: DeviceBudget,
  maxBatch: number | null,
): MemoryVerdict {
  const headroom = budget.usableBytes - estimate.totalBytes;
  return { fits: headroom >= 0, headroomBytes: headroom, maxBatch };
}

/** Seed 001's rule: maxBatch = current x usable share of total / current use (0.85 as the seed had it). */
export function seedRule(input: {
  currentBatch: number;
  currentBytes: number;
  totalBytes: number;
  usableFraction?: number;
}): { maxBatch: number; perSampleBytes: number; formula: string } {
  const share = input.usableFraction ?? 0.85;
  const maxBatch = Math.floor((input.currentBatch * share * input.totalBytes) / input.currentBytes);
  return {
    maxBatch,
    perSampleBytes: Math.round(input.currentBytes / input.currentBatch),
    formula: `${input.currentBatch} x ${share} x total / current use`,
  };
}

/** The formula tier (memory-formula's formula.ts): not on this branch, so never an estimate here. */
export function formulaTier(_configPath: string, _work: WorkSpec, _batch: number): MemoryEstimate | null {
  return null;
}
