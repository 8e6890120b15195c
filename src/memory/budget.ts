/**
 * The memory a step may use, and the verdict of an estimate against it. Discrete GPUs: nvidia-smi's
 * memory.total. Unified memory (GB10/DGX Spark, Jetson): /proc/meminfo MemAvailable, since there
 * cudaMemGetInfo counts the page cache as used and nvidia-smi prints [N/A]
 * (https://docs.nvidia.com/dgx/dgx-spark/known-issues.html#guidance-for-reporting-memory-resources-with-unified-memory-architecture,
 * https://github.com/unslothai/unsloth/pull/10704). The CUDA context is not subtracted here: every
 * estimate carries it as its own line (breakdown.cudaContext), so the verdict counts it once.
 */
import { UserError } from "../errors.js";
import type { Facts } from "../facts/schema.js";
import { loadPackagedData } from "../kb/load.js";
import { resolveGpu } from "../kb/queries/gpu.js";
import type { GpuRow } from "../kb/types.js";
import type { DeviceBudget, MemoryEstimate, MemoryVerdict } from "./types.js";

export interface BudgetTarget {
  name: string;
  memoryBytes: number;
  unified: boolean;
  source: string;
}

const MIB = 2 ** 20;
/** The KB states vendor memory in decimal GB (src/kb/types.ts GpuRow.memoryGB). */
const GB = 1e9;

function kbGpu(name: string): GpuRow | null {
  return resolveGpu(loadPackagedData().gpus, name).match;
}

/**
 * Memory shared with the CPU and nothing of the GPU's own: GB10, Jetson, Thor. GH200/GB200 are
 * coherent too, but their HBM is the GPU's memory and nvidia-smi reports it (the KB has its MiB).
 */
function sharesAllMemory(gpu: GpuRow): boolean {
  return gpu.unifiedMemory && !gpu.nvidiaSmiMemoryMiB;
}

/**
 * A --target from the KB: nvidia-smi's memory.total (MiB) where the KB has it, else the vendor's
 * decimal GB. Unified-memory rows are marked so the budget says the figure is all of RAM.
 */
export function targetFromKb(name: string): BudgetTarget {
  const resolution = resolveGpu(loadPackagedData().gpus, name);
  const gpu = resolution.match;
  if (!gpu) {
    const near = resolution.candidates.slice(0, 3).map((row) => row.name);
    throw new UserError(
      `"${name}" is no GPU the knowledge base knows`,
      near.length ? `did you mean: ${near.join(", ")}?` : "see `gpuprep kb gpus`",
    );
  }
  const firstSource = gpu.sources[0]?.url ?? "no source";
  if (gpu.nvidiaSmiMemoryMiB)
    return {
      name: gpu.name,
      memoryBytes: gpu.nvidiaSmiMemoryMiB * MIB,
      unified: false,
      source: `KB gpus.json: nvidia-smi memory.total ${gpu.nvidiaSmiMemoryMiB} MiB (${firstSource})`,
    };
  if (gpu.memoryGB)
    return {
      name: gpu.name,
      memoryBytes: Math.round(gpu.memoryGB * GB),
      unified: sharesAllMemory(gpu),
      source: `KB gpus.json: ${gpu.memoryGB} GB as the vendor states it (${firstSource})`,
    };
  throw new UserError(
    `the knowledge base has no memory size for ${gpu.name}`,
    "give the machine itself, or --from facts.json",
  );
}

function checkMargin(marginFraction: number): void {
  if (!(marginFraction >= 0 && marginFraction < 1))
    throw new UserError(
      `the safety margin must be a fraction in [0, 1), got ${marginFraction}`,
      "e.g. --margin 0.05 for 5 %",
    );
}

export function deviceBudget(
  facts: Facts | null,
  target: BudgetTarget | null,
  marginFraction: number,
): DeviceBudget {
  checkMargin(marginFraction);
  if (target) {
    return withMargin(marginFraction, {
      name: target.name,
      totalBytes: target.memoryBytes,
      unified: target.unified,
      source: target.unified
        ? `${target.source}; unified memory: shared with the CPU, less in practice`
        : target.source,
    });
  }
  if (!facts)
    throw new UserError(
      "no machine to size the batch for",
      "run on the machine, or give --target NAME or --from facts.json",
    );
  const gpu = facts.host.nvidia.gpus[0];
  if (!gpu)
    throw new UserError(
      `no NVIDIA GPU in the facts (nvidia-smi: ${facts.host.nvidia.status})`,
      "give --target NAME to size for a GPU from the knowledge base",
    );
  // nvidia-smi prints [N/A] for memory.total on unified-memory systems (https://github.com/unslothai/unsloth/pull/10283).
  const row = kbGpu(gpu.name);
  const unified = gpu.memoryTotalMiB === null || (row !== null && sharesAllMemory(row));
  if (!unified) {
    const total = (gpu.memoryTotalMiB as number) * MIB;
    const others = facts.host.nvidia.gpus.length - 1;
    return withMargin(marginFraction, {
      name: gpu.name,
      totalBytes: total,
      unified: false,
      source: `nvidia-smi memory.total of GPU ${gpu.index} (${gpu.memoryTotalMiB} MiB)${others > 0 ? `; one GPU of ${others + 1}` : ""}`,
    });
  }
  const total = facts.host.memTotalBytes;
  const available = facts.host.memAvailableBytes ?? null;
  if (available !== null && available !== undefined)
    return withMargin(
      marginFraction,
      {
        name: gpu.name,
        totalBytes: total ?? available,
        unified: true,
        source: "/proc/meminfo MemAvailable (unified memory: cudaMemGetInfo counts the page cache as used)",
      },
      available,
    );
  if (total === null)
    throw new UserError(
      `unified-memory GPU ${gpu.name} but the facts hold no /proc/meminfo figures`,
      "give --target NAME",
    );
  return withMargin(marginFraction, {
    name: gpu.name,
    totalBytes: total,
    unified: true,
    source:
      "/proc/meminfo MemTotal (unified memory; this snapshot predates MemAvailable, so memory in use is not subtracted)",
  });
}

/**
 * Every budget keeps the same share of its basis: the total, or MemAvailable on unified memory
 * where the total overstates what is free.
 */
function withMargin(
  marginFraction: number,
  budget: Omit<DeviceBudget, "usableBytes" | "marginFraction">,
  basisBytes = budget.totalBytes,
): DeviceBudget {
  // Spelled out, not spread, so the keys keep the order the --json output has always had.
  return {
    name: budget.name,
    totalBytes: budget.totalBytes,
    unified: budget.unified,
    usableBytes: Math.floor(basisBytes * (1 - marginFraction)),
    marginFraction,
    source: budget.source,
  };
}

export function verdictFor(
  estimate: MemoryEstimate,
  budget: DeviceBudget,
  maxBatch: number | null,
): MemoryVerdict {
  const headroomBytes = Math.round(budget.usableBytes - estimate.totalBytes);
  return { fits: headroomBytes >= 0, headroomBytes, maxBatch };
}
