/**
 * Where `gpuprep memory` adapts the formula side (budget.ts, formula.ts) to the command: a KB
 * target with the command's error prefix, and a budget for
 * a machine with no GPU. A machine without a GPU (and no --target) still gets its estimate printed: the budget
 * is then empty and the command exits 2 after the report, instead of refusing to estimate at all.
 */
import { UserError } from "../errors.js";
import type { Facts } from "../facts/schema.js";
import { deviceBudget, targetFromKb, type BudgetTarget } from "./budget.js";
import type { DeviceBudget } from "./types.js";

type TargetMemory = BudgetTarget;

/** A --target NAME from the knowledge base: nvidia-smi's MiB where known, else the vendor's GB. */
export function targetMemory(name: string): TargetMemory {
  try {
    return targetFromKb(name);
  } catch (error) {
    // Errors name the command and the flag, as every other error of `gpuprep memory` does.
    if (error instanceof UserError) throw new UserError(`memory: --target: ${error.message}`, error.hint);
    throw error;
  }
}

/** The device's memory and the share a step may use; an empty budget where there is no GPU at all. */
export function budgetFor(
  facts: Facts | null,
  target: TargetMemory | null,
  marginFraction: number,
): DeviceBudget {
  if (target === null && (facts === null || facts.host.nvidia.gpus.length === 0)) {
    return {
      name: "no GPU",
      totalBytes: 0,
      unified: false,
      usableBytes: 0,
      marginFraction,
      source: `no NVIDIA GPU seen${facts ? ` (nvidia-smi: ${facts.host.nvidia.status})` : ""}; give --target NAME`,
    };
  }
  return deviceBudget(facts, target, marginFraction);
}
