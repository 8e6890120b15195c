/**
 * The feature matrix: each GEMM precision and tensor format (bf16, fp16, tf32, fp32; FP8 E4M3 and
 * E5M2 through torch._scaled_mm, INT8 through torch._int_mm, MXFP8 and NVFP4 on Blackwell), each
 * SDPA backend and NCCL: available, ran, speed against the knowledge base's peak for that format,
 * or "not on this architecture" from the knowledge base.
 */
import type { z } from "zod";
import {
  FeaturesDataSchema,
  MatmulDataSchema,
  NcclDataSchema,
  SdpaDataSchema,
  type FeatureCellData,
  type Payload,
} from "./payload.js";
import type { GpuPeak } from "./peaks.js";
import type { FeatureCell, ValidationItem } from "./report.js";
import { densePeak } from "./peaks.js";
import { FEATURE_LIMITS, judgeRatio } from "./thresholds.js";
import type { PeakFormat } from "../kb/types.js";

const FEATURE_TITLES: Record<string, string> = {
  "fp8-e4m3": "fp8 e4m3 GEMM (torch._scaled_mm)",
  "fp8-e5m2": "fp8 e5m2 x e4m3 GEMM (torch._scaled_mm)",
  int8: "int8 GEMM (torch._int_mm)",
  mxfp8: "mxfp8 GEMM (torch._scaled_mm, e8m0 block scales)",
  nvfp4: "nvfp4 GEMM (torch._scaled_mm, e4m3 block scales)",
};

const MATMUL_FORMATS: Record<string, PeakFormat> = {
  bfloat16: "bf16",
  float16: "fp16",
  tf32: "tf32",
  float32: "fp32",
};

function dataOf<T extends z.ZodType>(payload: Payload, name: string, schema: T): z.infer<T> | null {
  const result = payload.benchmarks.results.find((r) => r.name === name && r.data);
  const parsed = result ? schema.safeParse(result.data) : null;
  return parsed?.success ? parsed.data : null;
}

function archOf(peak: GpuPeak | null, format: PeakFormat): FeatureCell["arch"] {
  const value = densePeak(peak, format);
  if (value === "not-on-arch") return "not-on-arch";
  const entry = peak?.formats?.[format];
  return value !== null || (entry !== undefined && entry !== "not-on-arch") ? "yes" : "unknown";
}

function notOnArchText(peak: GpuPeak | null, format: string): string {
  return `not on this architecture: the knowledge base's ${peak?.name ?? "GPU"} row has no ${format} tensor-core format (NVIDIA's architecture whitepaper)`;
}

/** The items of the features benchmark (one per cell; the matmul items cover bf16 ... fp32). */
export function judgeFeatures(payload: Payload, peak: GpuPeak | null): ValidationItem[] {
  const data = dataOf(payload, "features", FeaturesDataSchema);
  if (!data) return [];
  return data.cells.map((cell) => judgeCell(cell, peak, data.formatsFromKb));
}

function judgeCell(cell: FeatureCellData, peak: GpuPeak | null, fromKb: boolean): ValidationItem {
  const format = cell.format as PeakFormat;
  const title = FEATURE_TITLES[cell.feature] ?? cell.feature;
  const base = {
    id: `bench.features.${cell.feature}`,
    group: "benchmark" as const,
    category: "features",
    title,
  };
  if (cell.notOnArch) return { ...base, status: "skip", reason: notOnArchText(peak, format) };
  if (cell.available === false)
    return {
      ...base,
      status: "skip",
      reason: `not available in this build: ${cell.reason ?? "no reason given"}`,
    };
  if (cell.error) return { ...base, status: "fail", reason: `raised ${cell.error}` };
  if (!cell.tflops) return { ...base, status: "fail", reason: "no timing" };
  const unit = format === "int8" ? "TOPS" : "TFLOP/s";
  const measured = { value: cell.tflops, unit };
  const size = `${cell.m}x${cell.n}x${cell.k}`;
  const timing = `${size}, median ${cell.medianMs?.toFixed(3)} ms of ${cell.reps} runs`;
  if (cell.ok === false)
    return {
      ...base,
      status: "fail",
      reason: `wrong result: rel. error ${cell.relError} vs float64`,
      measured,
    };
  const dense = densePeak(peak, format);
  if (dense === "not-on-arch" || dense === null || !peak) {
    const why =
      dense === "not-on-arch"
        ? `ran although the knowledge base lists no ${format} tensor cores here (emulated?)`
        : `no ${format} peak known for this GPU${fromKb ? "" : " (nor its architecture)"}`;
    return {
      ...base,
      status: "info",
      reason: `${cell.tflops.toFixed(1)} ${unit} (${timing}); ${why}`,
      measured,
    };
  }
  const ratio = cell.tflops / dense;
  const status = judgeRatio(ratio, FEATURE_LIMITS);
  const slow =
    status === "pass"
      ? ""
      : `; under ${FEATURE_LIMITS.pass * 100}%: torch does not reach this format's tensor-core rate here (the kernel it ran is under Kernel provenance)`;
  return {
    ...base,
    status,
    reason: `${cell.tflops.toFixed(1)} ${unit}, ${(ratio * 100).toFixed(0)}% of the ${dense} ${unit} dense ${format} peak (${timing})${slow}`,
    measured,
    reference: { value: dense, unit, what: `${peak.name} dense ${format} peak` },
    ratio,
    limits: FEATURE_LIMITS,
  };
}

/** The whole matrix, for the report's featureMatrix and its tables. */
export function featureMatrix(payload: Payload, peak: GpuPeak | null): FeatureCell[] {
  return [
    ...matmulCells(payload, peak),
    ...featureCells(payload, peak),
    ...sdpaCells(payload),
    ...ncclCells(payload),
  ];
}

function matmulCells(payload: Payload, peak: GpuPeak | null): FeatureCell[] {
  const data = dataOf(payload, "matmul", MatmulDataSchema);
  if (!data) return [];
  const cells: FeatureCell[] = [];
  for (const [dtype, format] of Object.entries(MATMUL_FORMATS)) {
    const cases = data.cases.filter((c) => c.dtype === dtype);
    const largest = cases.sort((a, b) => b.n - a.n)[0];
    if (!largest) continue;
    const dense = densePeak(peak, format);
    const ran = Boolean(largest.tflops);
    const cell: FeatureCell = {
      feature: `${format} GEMM`,
      format,
      arch: archOf(peak, format),
      available: true,
      ran,
      ok: ran ? largest.ok !== false : null,
      note: largest.error ? `raised ${largest.error}` : `torch.matmul ${largest.n}^3`,
    };
    if (largest.tflops) {
      cell.measured = { value: largest.tflops, unit: "TFLOP/s" };
      if (typeof dense === "number") {
        cell.peak = dense;
        cell.ratio = largest.tflops / dense;
      }
    }
    cells.push(cell);
  }
  return cells;
}

function featureCells(payload: Payload, peak: GpuPeak | null): FeatureCell[] {
  const data = dataOf(payload, "features", FeaturesDataSchema);
  if (!data) return [];
  return data.cells.map((c) => {
    const format = c.format as PeakFormat;
    const dense = densePeak(peak, format);
    const unit = format === "int8" ? "TOPS" : "TFLOP/s";
    const cell: FeatureCell = {
      feature: FEATURE_TITLES[c.feature] ?? c.feature,
      format,
      arch: c.notOnArch ? "not-on-arch" : archOf(peak, format),
      available: c.notOnArch ? null : (c.available ?? null),
      ran: Boolean(c.tflops),
      ok: c.tflops ? c.ok !== false : null,
      note: c.notOnArch
        ? "not on this architecture (knowledge base); not called"
        : c.available === false
          ? (c.reason ?? "not in this build")
          : c.error
            ? `raised ${c.error}`
            : `${c.m}x${c.n}x${c.k}`,
    };
    if (c.tflops) {
      cell.measured = { value: c.tflops, unit };
      if (typeof dense === "number") {
        cell.peak = dense;
        cell.ratio = c.tflops / dense;
      }
    }
    return cell;
  });
}

function sdpaCells(payload: Payload): FeatureCell[] {
  const data = dataOf(payload, "sdpa", SdpaDataSchema);
  if (!data) return [];
  const names = new Set(data.cases.flatMap((c) => Object.keys(c.backends)));
  return [...names].map((name) => {
    const runs = data.cases.map((c) => c.backends[name]).filter((r) => r !== undefined);
    const ran = runs.filter((r) => r.available && r.medianMs);
    const best = Math.max(0, ...ran.map((r) => r.speedup ?? 0));
    const refused = runs.find((r) => r.available === false);
    const cell: FeatureCell = {
      feature: `SDPA ${name}`,
      format: null,
      arch: "unknown",
      available: ran.length > 0,
      ran: ran.length > 0,
      ok: ran.length > 0 ? ran.every((r) => r.ok !== false) : null,
      note: `ran at ${ran.length} of ${runs.length} shapes${refused?.reason ? `; refused: ${refused.reason.slice(0, 160)}` : ""}`,
    };
    if (best > 0) cell.measured = { value: best, unit: "x manual (best)" };
    return cell;
  });
}

function ncclCells(payload: Payload): FeatureCell[] {
  const data = dataOf(payload, "nccl", NcclDataSchema);
  if (!data) return [];
  const largest = data.sizes?.[data.sizes.length - 1];
  const cell: FeatureCell = {
    feature: "NCCL all-reduce",
    format: null,
    arch: "unknown",
    available: data.skipped ? null : true,
    ran: Boolean(largest),
    ok: largest ? true : null,
    note: data.skipped ?? `${data.worldSize} ranks (${data.backend})`,
  };
  if (largest) cell.measured = { value: largest.busbwGBs, unit: "GB/s bus" };
  return [cell];
}
