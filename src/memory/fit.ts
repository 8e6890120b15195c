/**
 * Fits the formula tier's activation coefficients on the accuracy benchmark's "fit" cells and
 * measures its error on the "holdout" cells (bench/memory/fit-formula.mjs is the command). The
 * records are the bench's JSONL (one JSON object per line, format in docs of the bench).
 * Minimises the squared relative error by Gauss-Newton: the estimate is linear in each
 * coefficient within one peak phase, so a few iterations settle.
 */
import { UserError, errorMessage } from "../errors.js";
import { type Calibration, cloneCalibration } from "./calibration.js";
import { type ModelConfig, modelConfigFromJson } from "./hf-config.js";
import { formulaEstimate } from "./formula.js";
import type { LoraSpec, MemoryAmp, MemoryDtype, MemoryOptimizer, MemoryTask, WorkSpec } from "./types.js";

interface BenchRecord {
  model: string;
  config: Record<string, unknown>;
  task: MemoryTask;
  amp: MemoryAmp | null;
  dtype: MemoryDtype;
  optimizer: MemoryOptimizer;
  gradCheckpointing: boolean;
  lora: LoraSpec | null;
  batch: number;
  seqLen: number | null;
  imageSize: number | null;
  parameterCount: number | null;
  truth: {
    status: "ok" | "oom" | "error";
    peakAllocatedBytes: number | null;
    peakReservedBytes: number | null;
  };
  split: "fit" | "holdout";
}

/** Blank lines and lines starting with "#" (a fixture's provenance line) are skipped. */
export function parseBenchJsonl(text: string, file: string): BenchRecord[] {
  const records: BenchRecord[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "" || line.startsWith("#")) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new UserError(`${file}:${index + 1} is not JSON: ${errorMessage(error)}`);
    }
    const r = value as Partial<BenchRecord>;
    if (!r || typeof r !== "object" || !r.config || !r.truth || typeof r.batch !== "number" || !r.split)
      throw new UserError(
        `${file}:${index + 1} lacks config, truth, batch or split`,
        "is this the memory bench's JSONL?",
      );
    records.push(r as BenchRecord);
  });
  return records;
}

function recordWork(r: BenchRecord): WorkSpec {
  return {
    task: r.task,
    amp: r.amp,
    dtype: r.dtype,
    optimizer: r.optimizer,
    gradCheckpointing: r.gradCheckpointing,
    seqLen: r.seqLen,
    imageSize: r.imageSize,
    evalStep: false,
    lora: r.lora,
  };
}

interface Cell {
  record: BenchRecord;
  config: ModelConfig;
  truth: number;
}

interface SkippedCell {
  model: string;
  batch: number;
  reason: string;
}

/** Cells with a measured peak whose config the formula tier reads; the rest are listed with why. */
function usableCells(records: BenchRecord[]): { cells: Cell[]; skipped: SkippedCell[] } {
  const cells: Cell[] = [];
  const skipped: SkippedCell[] = [];
  for (const record of records) {
    const skip = (reason: string) => skipped.push({ model: record.model, batch: record.batch, reason });
    if (record.truth.status !== "ok" || record.truth.peakAllocatedBytes === null) {
      skip(`truth ${record.truth.status}`);
      continue;
    }
    try {
      const config = modelConfigFromJson(record.config, record.model);
      cells.push({ record, config, truth: record.truth.peakAllocatedBytes });
    } catch (error) {
      skip(errorMessage(error));
    }
  }
  return { cells, skipped };
}

function predictPeak(cell: Cell, calibration: Calibration): number {
  return formulaEstimate(cell.config, recordWork(cell.record), cell.record.batch, calibration)
    .peakAllocatedBytes;
}

/** A coefficient the fit may move: its name, and how to read and set it in a calibration. */
interface Knob {
  name: string;
  get: (c: Calibration) => number;
  set: (c: Calibration, value: number) => void;
}

function knobsFor(cells: Cell[]): Knob[] {
  const knobs: Knob[] = [];
  const families = new Set(
    cells.filter((c) => c.config.structure.kind !== "cnn").map((c) => c.config.family),
  );
  for (const family of families)
    knobs.push({
      name: `activations.layerScale.${family}`,
      get: (c) => c.activations.layerScale.value[family] ?? 1,
      set: (c, v) => {
        c.activations.layerScale.value[family] = v;
      },
    });
  if (cells.some((c) => c.config.structure.kind === "transformer" && c.config.structure.logitsVocab > 0))
    knobs.push({
      name: "activations.lossBytesPerTokenVocab",
      get: (c) => c.activations.lossBytesPerTokenVocab.value,
      set: (c, v) => {
        c.activations.lossBytesPerTokenVocab.value = v;
      },
    });
  if (cells.some((c) => c.record.task === "finetune-lora" || c.record.task === "finetune-qlora"))
    knobs.push({
      name: "activations.loraLayerFactor",
      get: (c) => c.activations.loraLayerFactor.value,
      set: (c, v) => {
        c.activations.loraLayerFactor.value = v;
      },
    });
  if (cells.some((c) => c.config.structure.kind === "cnn"))
    knobs.push({
      name: "activations.cnnBytesPerFeatureElement",
      get: (c) => c.activations.cnnBytesPerFeatureElement.value,
      set: (c, v) => {
        c.activations.cnnBytesPerFeatureElement.value = v;
      },
    });
  return knobs;
}

/** Solves the small dense system A x = b (Gaussian elimination with partial pivoting). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const p = m[col]![col]!;
    if (Math.abs(p) < 1e-12) continue;
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / p;
      for (let k = col; k <= n; k++) m[r]![k]! -= f * m[col]![k]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) < 1e-12 ? 0 : row[n]! / row[i]!));
}

interface CellError {
  model: string;
  batch: number;
  seqLen: number | null;
  imageSize: number | null;
  gradCheckpointing: boolean;
  task: MemoryTask;
  truthBytes: number;
  estimateBytes: number;
  errorPct: number;
}

interface FitResult {
  calibration: Calibration;
  fitted: { name: string; before: number; after: number }[];
  fitCells: CellError[];
  holdoutCells: CellError[];
  medianAbsErrorPct: number | null;
  p95AbsErrorPct: number | null;
  /** Largest reserved/allocated - 1 over all cells that report reserved (a safety margin, not a fitted term). */
  allocatorOverheadFraction: number | null;
  skipped: SkippedCell[];
  /** Cells whose bench-reported parameter count differs from the formula tier's count. */
  parameterCountMismatches: Array<{ model: string; bench: number; formula: number }>;
}

function cellErrors(cells: Cell[], calibration: Calibration): CellError[] {
  return cells.map((cell) => {
    const estimate = predictPeak(cell, calibration);
    const r = cell.record;
    return {
      model: r.model,
      batch: r.batch,
      seqLen: r.seqLen,
      imageSize: r.imageSize,
      gradCheckpointing: r.gradCheckpointing,
      task: r.task,
      truthBytes: cell.truth,
      estimateBytes: estimate,
      errorPct: ((estimate - cell.truth) / cell.truth) * 100,
    };
  });
}

/** Nearest-rank percentile of absolute values. */
export function absPercentile(values: number[], pct: number): number | null {
  if (values.length === 0) return null;
  const sorted = values.map(Math.abs).sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((pct / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export function absMedian(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = values.map(Math.abs).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function fitCalibration(records: BenchRecord[], base: Calibration, iterations = 8): FitResult {
  const { cells, skipped } = usableCells(records);
  const fit = cells.filter((c) => c.record.split === "fit");
  const holdout = cells.filter((c) => c.record.split === "holdout");
  const calibration = cloneCalibration(base);
  const knobs = knobsFor(fit);
  const before = knobs.map((k) => k.get(calibration));
  for (let iteration = 0; iteration < iterations && knobs.length > 0 && fit.length > 0; iteration++) {
    const residuals = fit.map((cell) => (predictPeak(cell, calibration) - cell.truth) / cell.truth);
    const jacobian = fit.map((cell) =>
      knobs.map((knob) => {
        const value = knob.get(calibration);
        const step = Math.max(Math.abs(value) * 1e-3, 1e-3);
        const trial = cloneCalibration(calibration);
        knob.set(trial, value + step);
        return (predictPeak(cell, trial) - predictPeak(cell, calibration)) / step / cell.truth;
      }),
    );
    // Normal equations with a small ridge, so coefficients no fit cell moves stay where they are.
    const n = knobs.length;
    const a = Array.from({ length: n }, (_, i) =>
      Array.from(
        { length: n },
        (_, j) => jacobian.reduce((s, row) => s + row[i]! * row[j]!, 0) + (i === j ? 1e-9 : 0),
      ),
    );
    const b = Array.from(
      { length: n },
      (_, i) => -jacobian.reduce((s, row, r) => s + row[i]! * residuals[r]!, 0),
    );
    const delta = solve(a, b);
    knobs.forEach((knob, i) => knob.set(calibration, Math.max(0, knob.get(calibration) + delta[i]!)));
  }
  // Three significant figures: the truth itself is rounded (and the fit cells are few).
  knobs.forEach((knob) => knob.set(calibration, Number(knob.get(calibration).toPrecision(3))));
  const holdoutCells = cellErrors(holdout, calibration);
  const overheads = cells
    .filter((c) => c.record.truth.peakReservedBytes !== null)
    .map((c) => (c.record.truth.peakReservedBytes as number) / c.truth - 1);
  return {
    calibration,
    fitted: knobs.map((k, i) => ({ name: k.name, before: before[i] as number, after: k.get(calibration) })),
    fitCells: cellErrors(fit, calibration),
    holdoutCells,
    medianAbsErrorPct: absMedian(holdoutCells.map((c) => c.errorPct)),
    p95AbsErrorPct: absPercentile(
      holdoutCells.map((c) => c.errorPct),
      95,
    ),
    allocatorOverheadFraction: overheads.length ? Math.max(...overheads) : null,
    skipped,
    parameterCountMismatches: cells
      .filter((c) => c.record.parameterCount !== null && c.record.task === "train")
      .filter((c) => c.record.parameterCount !== c.config.parameterCount)
      .map((c) => ({
        model: c.record.model,
        bench: c.record.parameterCount as number,
        formula: c.config.parameterCount,
      })),
  };
}

interface SafetyResult {
  /** Cells that ran out of memory although the estimate said they fit. */
  unsafe: Array<{ model: string; batch: number; estimateTotalBytes: number }>;
  /** Out-of-memory cells the formula could read (the denominator). */
  oomCells: number;
}

/**
 * The third target: no cell where the estimate says "fits" and the real run ran out of
 * memory. "Fits" is the verdict's rule: totalBytes (peak + context + allocator reserve) within
 * the usable bytes of the bench's device.
 */
export function unsafeEstimates(
  records: BenchRecord[],
  calibration: Calibration,
  usableBytes: number,
): SafetyResult {
  const unsafe: SafetyResult["unsafe"] = [];
  let oomCells = 0;
  for (const record of records) {
    if (record.truth.status !== "oom") continue;
    let config: ModelConfig;
    try {
      config = modelConfigFromJson(record.config, record.model);
    } catch {
      continue;
    }
    oomCells++;
    const total = formulaEstimate(config, recordWork(record), record.batch, calibration).totalBytes;
    if (total <= usableBytes)
      unsafe.push({ model: record.model, batch: record.batch, estimateTotalBytes: total });
  }
  return { unsafe, oomCells };
}
