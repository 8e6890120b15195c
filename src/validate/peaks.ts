/** The GPU's own peaks (tensor TFLOP/s per precision, memory bandwidth) from the knowledge base. */
import type { KnowledgeBase } from "../kb/index.js";
import type { GpuRow, PeakFormat, PrecisionPeak } from "../kb/types.js";

export interface GpuPeak {
  /** The knowledge base's name for the GPU. */
  name: string;
  tflops: { bf16: number | null; fp16: number | null; tf32: number | null; fp32: number | null };
  /** Every precision's dense and sparse peak, or "not-on-arch" (the KB row's peaks). */
  formats?: Partial<Record<PeakFormat, PrecisionPeak | "not-on-arch">>;
  memoryBandwidthGBs: number | null;
  sources: string[];
}

/**
 * Looks the device up by the name torch reports ("NVIDIA H100 80GB HBM3"). Never by compute
 * capability alone: an A100 and an A30 are both 8.0 with very different peaks.
 */
export function gpuPeakFor(kb: KnowledgeBase, deviceName: string): GpuPeak | null {
  const row = kb.gpu(deviceName);
  return row ? peakFromRow(row) : null;
}

function peakFromRow(row: GpuRow): GpuPeak {
  return {
    name: row.name,
    tflops: { ...row.peakTflops },
    ...(row.peaks ? { formats: { ...row.peaks } } : {}),
    memoryBandwidthGBs: row.memoryBandwidthGBs,
    sources: row.sources.map((source) => source.url),
  };
}

/** The dense peak of one format, "not-on-arch", or null where the KB has no figure. */
export function densePeak(peak: GpuPeak | null, format: PeakFormat): number | "not-on-arch" | null {
  const entry = peak?.formats?.[format];
  if (entry === "not-on-arch") return entry;
  if (entry?.dense) return entry.dense;
  // Rows read before the per-format peaks: the four dense tensor figures.
  if (format === "bf16" || format === "fp16" || format === "tf32" || format === "fp32")
    return peak?.tflops[format] ?? null;
  return null;
}

/** The formats the feature matrix calls (matmul's four are always called). */
const FEATURE_FORMATS = ["fp8", "int8", "mxfp8", "nvfp4"] as const satisfies readonly PeakFormat[];

/**
 * Per compute capability, whether its tensor cores have each feature format: false when every GPU
 * row of that capability with per-format peaks says "not-on-arch", true when one has it. The
 * payload calls only the formats that are not false, so "not on this architecture" comes from the
 * knowledge base and never from a failed call.
 */
export function formatsByCapability(kb: KnowledgeBase): Record<string, Record<string, boolean>> {
  const table: Record<string, Record<string, boolean>> = {};
  for (const row of kb.data.gpus) {
    if (!row.peaks) continue;
    const entry = (table[row.computeCapability] ??= {});
    for (const format of FEATURE_FORMATS) {
      const value = row.peaks[format];
      if (value === undefined) continue;
      const has = value !== "not-on-arch";
      entry[format] = (entry[format] ?? false) || has;
    }
  }
  return table;
}
