/**
 * The formula tier: a memory estimate from the model's config alone (no torch), for targets
 * without a usable Python. Weights, gradients and optimizer state follow from the parameter
 * tensors and the cited byte rules; activations follow from the model's shape and coefficients
 * fitted on the accuracy benchmark. Every coefficient comes from calibration.json with its source.
 */
import { UserError } from "../errors.js";
import { type Calibration, defaultCalibration } from "./calibration.js";
import type { ModelConfig } from "./hf-config.js";
import { type ParamGroup, elementsOf } from "./model-params.js";
import { estimateActivations } from "./formula-activations.js";
import type { DeviceBudget, MemoryBreakdown, MemoryDtype, MemoryEstimate, WorkSpec } from "./types.js";

/** One tensor class of the model as the step holds it: how many elements, at how many bytes. */
interface HeldTensor {
  group: ParamGroup;
  /** Adapter tensors (LoRA A and B) are listed with shape [rank, in] / [out, rank]. */
  shape: number[];
  elements: number;
  trainable: boolean;
  bytesPerElement: number;
  /** Used in a matmul (autocast casts and caches it when trainable). */
  matmul: boolean;
}

function bytesOf(dtype: MemoryDtype, calibration: Calibration): number {
  return calibration.bytesPerElement.value[dtype];
}

function matchesTarget(path: string, target: string): boolean {
  // PEFT matches a target against the module name's last components (suffix match on ".").
  return path === target || path.endsWith(`.${target}`);
}

/** The Linear groups LoRA adds adapters to: the named targets, or every Linear but the output head. */
function loraTargetGroups(config: ModelConfig, targets: string[]): ParamGroup[] {
  const linears = config.groups.filter((g) => g.role === "linear");
  if (targets.length === 0) return linears;
  const chosen = linears.filter((g) => targets.some((t) => matchesTarget(g.path, t)));
  if (chosen.length === 0)
    throw new UserError(
      `LoRA targets ${targets.join(", ")} match no Linear layer of this ${config.family} model`,
      `its Linear layers: ${[...new Set(linears.map((g) => g.path.split(".").pop()))].join(", ")}`,
    );
  return chosen;
}

/** Adapter parameters: rank × (in + out) per targeted Linear (A is rank×in, B is out×rank). */
export function loraParameterCount(config: ModelConfig, rank: number, targets: string[]): number {
  return loraTargetGroups(config, targets).reduce(
    (sum, g) => sum + rank * ((g.shape[1] ?? 0) + (g.shape[0] ?? 0)) * g.count,
    0,
  );
}

function tiedHeadElements(config: ModelConfig): number {
  const s = config.structure;
  if (s.kind !== "transformer" || s.logitsVocab === 0) return 0;
  const ownHead = config.groups.some((g) => g.role === "head" && elementsOf(g.shape) > 0);
  return ownHead ? 0 : s.logitsVocab * s.hidden;
}

function heldTensors(config: ModelConfig, work: WorkSpec, c: Calibration): HeldTensor[] {
  const dtypeBytes = bytesOf(work.dtype, c);
  const training = work.task === "train";
  const held: HeldTensor[] = [];
  const tiedExtra = tiedHeadElements(config);
  for (const group of config.groups) {
    const weight = elementsOf(group.shape) * group.count;
    const matmul = group.role === "linear" || group.role === "head" || group.role === "conv";
    const quantized = work.task === "finetune-qlora" && group.role === "linear";
    const weightBytes = quantized
      ? c.qlora.nf4BytesPerParam.value + c.qlora.quantConstantsBytesPerParam.value
      : dtypeBytes;
    held.push({
      group,
      shape: group.shape,
      elements: weight,
      trainable: training,
      bytesPerElement: weightBytes,
      matmul,
    });
    if (group.bias > 0)
      held.push({
        group,
        shape: [group.bias],
        elements: group.bias * group.count,
        trainable: training,
        bytesPerElement: dtypeBytes,
        matmul: false,
      });
  }
  // A tied output head is the token embedding used in a matmul: autocast caches its 16-bit copy too.
  if (tiedExtra > 0) {
    const embedding = held.find((h) => h.group.role === "embedding");
    if (embedding) embedding.matmul = true;
  }
  if ((work.task === "finetune-lora" || work.task === "finetune-qlora") && work.lora) {
    const rank = work.lora.rank;
    for (const group of loraTargetGroups(config, work.lora.targets)) {
      const [out = 0, inF = 0] = group.shape;
      const adapter = (shape: number[]): HeldTensor => ({
        group,
        shape,
        elements: elementsOf(shape) * group.count,
        trainable: true,
        bytesPerElement: c.lora.adapterBytesPerParam.value,
        matmul: true,
      });
      held.push(adapter([rank, inF]), adapter([out, rank]));
    }
  }
  return held;
}

/** Optimizer state bytes of one trainable tensor. */
function optimizerBytes(tensor: HeldTensor, work: WorkSpec, c: Calibration): number {
  const fp32 = c.bytesPerElement.value.float32;
  // AdamW and SGD keep their states in the parameter's dtype; the coefficients are stated for fp32.
  const dtypeShare = tensor.bytesPerElement / fp32;
  const perTensor = tensor.elements / tensor.group.count;
  switch (work.optimizer) {
    case "adamw":
      return tensor.elements * c.optimizer.adamwStateBytesPerParam.value * dtypeShare;
    case "adamw8bit":
      return perTensor >= c.optimizer.adamw8bitMinQuantizedElements.value
        ? tensor.elements * c.optimizer.adamw8bitStateBytesPerParam.value
        : tensor.elements * c.optimizer.adamwStateBytesPerParam.value * dtypeShare;
    case "sgd":
      return tensor.elements * c.optimizer.sgdMomentumStateBytesPerParam.value * dtypeShare;
    case "adafactor": {
      const shape = tensor.shape;
      if (shape.length < 2) return tensor.elements * c.optimizer.adafactorStateBytesPerElement.value;
      const rows = elementsOf(shape.slice(0, -1));
      const cols = elementsOf(shape.slice(0, -2)) * (shape[shape.length - 1] ?? 0);
      return (rows + cols) * tensor.group.count * c.optimizer.adafactorStateBytesPerElement.value;
    }
  }
}

interface WeightTerms {
  weights: number;
  gradients: number;
  optimizerState: number;
  ampWeightCopies: number;
  stepTemporaries: number;
  trainableParameterCount: number;
}

export function weightTerms(
  config: ModelConfig,
  work: WorkSpec,
  c: Calibration = defaultCalibration(),
): WeightTerms {
  const held = heldTensors(config, work, c);
  const trainable = held.filter((h) => h.trainable);
  const trainableCount = trainable.reduce((s, h) => s + h.elements, 0);
  const autocastCaches = work.amp !== null;
  return {
    weights: held.reduce((s, h) => s + h.elements * h.bytesPerElement, 0),
    gradients: trainable.reduce((s, h) => s + h.elements * h.bytesPerElement, 0),
    optimizerState: trainable.reduce((s, h) => s + optimizerBytes(h, work, c), 0),
    // Trainable weights: autocast caches their 16-bit casts. Frozen weights (LoRA's base): not cached, but
    // autograd saves each cast for the input gradient, so they live to the backward just the same.
    // Inference saves nothing; QLoRA's 4-bit weights are narrower than the cast and dequantised per use.
    ampWeightCopies:
      autocastCaches && work.task !== "infer"
        ? held
            .filter((h) => h.matmul && h.bytesPerElement > c.amp.weightCopyBytesPerParam.value)
            .reduce((s, h) => s + h.elements * c.amp.weightCopyBytesPerParam.value, 0)
        : 0,
    stepTemporaries: trainableCount * c.optimizer.stepTemporaryBytesPerParam.value,
    trainableParameterCount: trainableCount,
  };
}

function accuracyOf(c: Calibration): MemoryEstimate["accuracy"] {
  const a = c.accuracy;
  if (a.medianAbsErrorPct === null || a.p95AbsErrorPct === null) return null;
  return { medianAbsErrorPct: a.medianAbsErrorPct, p95AbsErrorPct: a.p95AbsErrorPct, source: a.source };
}

interface Phase {
  name: string;
  breakdown: Omit<MemoryBreakdown, "cudaContext" | "allocatorOverhead">;
}

const sum = (b: Phase["breakdown"]): number =>
  b.parameters + b.gradients + b.optimizerState + b.activations + b.temporaries;

export function formulaEstimate(
  config: ModelConfig,
  work: WorkSpec,
  batch: number,
  calibration: Calibration = defaultCalibration(),
): MemoryEstimate {
  if (!Number.isInteger(batch) || batch < 1)
    throw new UserError(`batch must be a positive integer, got ${batch}`);
  if ((work.task === "finetune-lora" || work.task === "finetune-qlora") && !work.lora)
    throw new UserError(`--task ${work.task} needs a LoRA rank and targets`);
  const c = calibration;
  const w = weightTerms(config, work, c);
  const act = estimateActivations(config, work, batch, c);
  const notes = [...act.notes];
  const phases: Phase[] = [];
  if (work.task === "infer") {
    phases.push({
      name: "forward",
      breakdown: {
        parameters: w.weights,
        gradients: 0,
        optimizerState: 0,
        activations: act.inference,
        temporaries: 0,
      },
    });
  } else {
    phases.push({
      name: "end of forward",
      breakdown: {
        parameters: w.weights,
        gradients: 0,
        optimizerState: w.optimizerState,
        activations: act.training,
        temporaries: w.ampWeightCopies,
      },
    });
    if (act.recompute > 0)
      phases.push({
        name: "backward, recomputing one checkpointed layer",
        breakdown: {
          parameters: w.weights,
          gradients: 0,
          optimizerState: w.optimizerState,
          activations: act.recompute,
          temporaries: 0,
        },
      });
    phases.push({
      name: "optimizer step",
      breakdown: {
        parameters: w.weights,
        gradients: w.gradients,
        optimizerState: w.optimizerState,
        activations: 0,
        temporaries: w.stepTemporaries,
      },
    });
    if (work.evalStep)
      phases.push({
        name: "eval step",
        breakdown: {
          parameters: w.weights,
          gradients: 0,
          optimizerState: w.optimizerState,
          activations: act.inference,
          temporaries: 0,
        },
      });
  }
  const chosen = phases.reduce((best, phase) => (sum(phase.breakdown) > sum(best.breakdown) ? phase : best));
  // Bytes are whole: each part rounded up, so the sum never falls below the fractional one.
  const peak = {
    name: chosen.name,
    breakdown: {
      parameters: Math.ceil(chosen.breakdown.parameters),
      gradients: Math.ceil(chosen.breakdown.gradients),
      optimizerState: Math.ceil(chosen.breakdown.optimizerState),
      activations: Math.ceil(chosen.breakdown.activations),
      temporaries: Math.ceil(chosen.breakdown.temporaries),
    },
  };
  const peakAllocatedBytes = sum(peak.breakdown);
  const allocatorOverhead = Math.round(peakAllocatedBytes * c.allocatorOverheadFraction.value);
  const cudaContext = c.cudaContextBytes.value;
  notes.push(`peak at the ${peak.name}`);
  return {
    tier: "formula",
    batch,
    peakAllocatedBytes,
    totalBytes: peakAllocatedBytes + cudaContext + allocatorOverhead,
    breakdown: { ...peak.breakdown, cudaContext, allocatorOverhead },
    parameterCount: config.parameterCount,
    trainableParameterCount: w.trainableParameterCount,
    accuracy: accuracyOf(c),
    notes,
  };
}

/** The largest batch whose estimate fits the usable memory (doubling, then bisecting); null if batch 1 does not. */
export function maxBatchByFormula(
  config: ModelConfig,
  work: WorkSpec,
  budget: DeviceBudget,
  calibration: Calibration = defaultCalibration(),
  limit = 1 << 20,
): number | null {
  const fits = (batch: number) =>
    formulaEstimate(config, work, batch, calibration).totalBytes <= budget.usableBytes;
  if (!fits(1)) return null;
  let good = 1;
  let bad = 2;
  while (bad <= limit && fits(bad)) {
    good = bad;
    bad *= 2;
  }
  if (bad > limit) return good;
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    if (fits(mid)) good = mid;
    else bad = mid;
  }
  return good;
}
