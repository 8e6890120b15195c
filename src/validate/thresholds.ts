/**
 * Where a measured figure stops being fine. Each limit is a fraction of the GPU's own peak from
 * the knowledge base (or of the PCIe link's rate), and docs/validate.md gives the reasoning.
 */
import type { Status } from "./report.js";

interface RatioLimits {
  /** At or above: pass. */
  pass: number;
  /** At or above (and below pass): warn. Below: fail. */
  warn: number;
}

/**
 * Dense matmul at 8192^3 against the datasheet's dense peak. Datasheet peaks assume boost clocks
 * that a power-capped chip does not hold under tensor-core load: cuBLAS reaches 70-80% on H100 SXM
 * (778 of 989 TFLOP/s bf16 measured there), so under 60% means something is off (clocks held low,
 * another process on the GPU, a slow fallback kernel), and under 35% is broken.
 */
export const MATMUL_LIMITS: RatioLimits = { pass: 0.6, warn: 0.35 };

/**
 * The feature matrix's other tensor formats (fp8, int8, mxfp8, nvfp4) at 8192^3 against their
 * dense peak: pass from 60% as a bf16 matmul, otherwise warn, never fail on speed alone. Which
 * kernel torch picks for these is torch's choice, not a fault of the environment: torch 2.11's
 * torch._int_mm runs an sm80 CUTLASS WMMA kernel on the H100 (133 of 1979 TOPS, 7%; measured
 * 2026-11-27, docs/reports/validate-h100-issue27.txt). A wrong result still fails.
 */
export const FEATURE_LIMITS: RatioLimits = { pass: 0.6, warn: 0 };

/** A large device copy reaches 85-90% of the HBM datasheet rate (2.95 of 3.35 TB/s on H100 SXM). */
export const MEMBW_LIMITS: RatioLimits = { pass: 0.7, warn: 0.5 };

/**
 * Pinned copies against the PCIe link's raw per-direction rate (lanes x per-lane rate): 80-88% is
 * usual (54 of 63 GB/s on a gen5 x16 H100). Under 60% points at a shared switch, a wrong NUMA node
 * or an IOMMU in the way; under 35% at a link trained narrower or slower than it should be.
 */
export const TRANSFER_LIMITS: RatioLimits = { pass: 0.6, warn: 0.35 };

/**
 * Raw rate of one PCIe lane per direction in GB/s after line encoding: 8b/10b for gen 1-2,
 * 128b/130b for gen 3-5 (PCI-SIG, PCI Express Base Specification revisions 1.0-5.0). Gen 6 (PAM4,
 * FLIT mode) runs 64 GT/s per lane: 8 GB/s raw before FLIT overhead, which we do not model.
 */
export const PCIE_LANE_GBS: Record<number, number> = {
  1: 0.25,
  2: 0.5,
  3: 0.985,
  4: 1.969,
  5: 3.938,
  6: 7.877,
};

/**
 * The least speedup of the best fused SDPA backend over manual attention (bf16, the largest shape
 * run) for a GPU of this compute-capability major. Fused kernels skip writing the S x S score
 * matrix, so the gain grows with sequence length and with how far the chip's tensor throughput
 * outruns its memory: 4.2x (flash) and 6.5x (cuDNN) on H100 at S=4096, so under 2.5x on Hopper
 * or newer means the fast backends are not in use. Ampere gains less (FlashAttention-2 paper:
 * 2-4x over PyTorch attention on A100); older GPUs have no flash kernels and gain little.
 */
export function sdpaMinSpeedup(ccMajor: number): number {
  if (ccMajor >= 9) return 2.5;
  if (ccMajor >= 8) return 2.0;
  return 1.2;
}

export function judgeRatio(ratio: number, limits: RatioLimits): Status {
  if (!Number.isFinite(ratio)) return "fail";
  if (ratio >= limits.pass) return "pass";
  if (ratio >= limits.warn) return "warn";
  return "fail";
}
