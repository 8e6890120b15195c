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
