/**
 * The formula tier's coefficients, each with its source, read from calibration.json. The code
 * holds no byte constants of its own: a coefficient changes in the JSON (by hand with its source,
 * or by bench/memory/fit-formula.mjs from a benchmark run) and every estimate follows.
 */
import { readFileSync } from "node:fs";

interface Sourced<T> {
  value: T;
  source: string;
}

export interface Calibration {
  schema: "gpuprep.memory-calibration";
  schemaVersion: 1;
  bytesPerElement: Sourced<{ float32: number; bfloat16: number; float16: number }>;
  optimizer: {
    adamwStateBytesPerParam: Sourced<number>;
    adamw8bitStateBytesPerParam: Sourced<number>;
    adamw8bitMinQuantizedElements: Sourced<number>;
    sgdMomentumStateBytesPerParam: Sourced<number>;
    adafactorStateBytesPerElement: Sourced<number>;
    stepTemporaryBytesPerParam: Sourced<number>;
  };
  amp: { weightCopyBytesPerParam: Sourced<number> };
  lora: { adapterBytesPerParam: Sourced<number> };
  qlora: { nf4BytesPerParam: Sourced<number>; quantConstantsBytesPerParam: Sourced<number> };
  activations: {
    structure: {
      hiddenBytesPerToken: number;
      ffnBytesPerTokenPlain: number;
      ffnBytesPerTokenGated: number;
      crossAttentionBytesPerToken: number;
      source: string;
    };
    layerScale: Sourced<Record<string, number>>;
    borrowedScale: Sourced<Record<string, string>>;
    lossBytesPerTokenVocab: Sourced<number>;
    checkpointedInputBytesPerTokenHidden: Sourced<number>;
    fp32ActivationFactor: Sourced<number>;
    cnnBytesPerFeatureElement: Sourced<number>;
    inferenceLiveLayers: Sourced<number>;
    loraLayerFactor: Sourced<number>;
  };
  cudaContextBytes: Sourced<number>;
  /** Measured CUDA contexts by GPU and torch version (outside the caching allocator). */
  cudaContexts: Sourced<{ gpu: string; torch: string; cuda: string; bytes: number }[]>;
  /** Added to the allocator model's reserve: transient kernel workspaces the trace never sees. */
  allocatorSafetyFraction: Sourced<number>;
  /** Added per share of the step's allocations that convolutions read (cuDNN workspaces). */
  convolutionWorkspaceFraction: Sourced<number>;
  /** Memory the driver keeps from nvidia-smi's memory.total (the allocator cannot reach it). */
  driverReservedBytes: Sourced<number>;
  allocatorOverheadFraction: Sourced<number>;
  accuracy: {
    medianAbsErrorPct: number | null;
    p95AbsErrorPct: number | null;
    cells: number;
    source: string;
  };
}

let cached: Calibration | null = null;

/** The packaged calibration (copied next to the compiled module by scripts/copy-assets.mjs). */
export function defaultCalibration(): Calibration {
  cached ??= JSON.parse(readFileSync(new URL("./calibration.json", import.meta.url), "utf8")) as Calibration;
  return cached;
}

/** A deep copy to change coefficients in (the fit does this) without touching the packaged one. */
export function cloneCalibration(calibration: Calibration): Calibration {
  return structuredClone(calibration);
}

export interface CudaContext {
  bytes: number;
  /** "measured: H100, torch 2.11" or "derived from H100, torch 2.11 (no measurement for X)" */
  basis: string;
}

/**
 * The CUDA context for a GPU and torch version: the measured entry for that GPU and torch minor,
 * else the nearest one (same GPU, else the same torch, else the first), labelled derived.
 */
export function cudaContextFor(
  gpuName: string | null,
  torchVersion: string | null,
  calibration: Calibration = defaultCalibration(),
): CudaContext {
  const entries = calibration.cudaContexts.value;
  const minor = (torchVersion ?? "").split(".").slice(0, 2).join(".");
  const gpuMatches = (gpu: string) => gpuName !== null && gpuName.toUpperCase().includes(gpu.toUpperCase());
  const exact = entries.find((e) => gpuMatches(e.gpu) && e.torch === minor);
  if (exact) return { bytes: exact.bytes, basis: `measured: ${exact.gpu}, torch ${exact.torch}` };
  const near = entries.find((e) => gpuMatches(e.gpu)) ?? entries.find((e) => e.torch === minor) ?? entries[0];
  if (!near) return { bytes: calibration.cudaContextBytes.value, basis: "derived" };
  return {
    bytes: near.bytes,
    basis: `derived from ${near.gpu}, torch ${near.torch} (not measured for ${gpuName ?? "this GPU"}${torchVersion ? `, torch ${torchVersion}` : ""})`,
  };
}
