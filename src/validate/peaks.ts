/**
 * The GPU's own peaks from the knowledge base. KnowledgeBase.gpu(nameOrCc) and GpuRow's peak
 * fields are being filled on the kb branch; until that lands the lookup finds nothing and every
 * figure is reported without a reference instead of being judged against a guess.
 */
import type { KnowledgeBase } from "../kb/index.js";
import type { GpuRow } from "../kb/types.js";
import type { GpuPeak } from "./report.js";

type GpuLookup = (nameOrCc: string) => GpuRow | null | undefined;

/**
 * Looks the device up by the name torch reports ("NVIDIA H100 80GB HBM3"). Never by compute
 * capability alone: an A100 and an A30 are both 8.0 with very different peaks.
 */
export function gpuPeakFor(kb: KnowledgeBase, deviceName: string): GpuPeak | null {
  const lookup = (kb as unknown as { gpu?: GpuLookup }).gpu;
  if (typeof lookup !== "function") return null;
  const row = lookup.call(kb, deviceName);
  if (!row) return null;
  return peakFromRow(row);
}

export function peakFromRow(row: GpuRow): GpuPeak {
  return {
    name: row.name,
    tflops: { ...row.peakTflops },
    memoryBandwidthGBs: row.memoryBandwidthGBs,
    sources: row.sources.map((source) => source.url),
  };
}
