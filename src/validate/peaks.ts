/** The GPU's own peaks (dense tensor TFLOP/s, memory bandwidth) from the knowledge base. */
import type { KnowledgeBase } from "../kb/index.js";
import type { GpuRow } from "../kb/types.js";
import type { GpuPeak } from "./report.js";

/**
 * Looks the device up by the name torch reports ("NVIDIA H100 80GB HBM3"). Never by compute
 * capability alone: an A100 and an A30 are both 8.0 with very different peaks.
 */
export function gpuPeakFor(kb: KnowledgeBase, deviceName: string): GpuPeak | null {
  const row = kb.gpu(deviceName);
  return row ? peakFromRow(row) : null;
}
export function peakFromRow(row: GpuRow): GpuPeak {
  return {
    name: row.name,
    tflops: { ...row.peakTflops },
    memoryBandwidthGBs: row.memoryBandwidthGBs,
    sources: row.sources.map((source) => source.url),
  };
}
