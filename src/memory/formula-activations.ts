/**
 * Activation memory of the formula tier, from the model's shape: per layer per token for
 * transformers (Korthikanti's term structure scaled to what HF models really save), the loss
 * path per token × vocab element, and feature-map sizes for CNNs. Coefficients: calibration.json.
 */
import { UserError } from "../errors.js";
import type { Calibration } from "./calibration.js";
import type { CnnStructure, ModelConfig, TransformerStructure } from "./hf-config.js";
import type { WorkSpec } from "./types.js";

interface ActivationTerms {
  /** Saved for backward at the forward's end (layers + loss path), or, with checkpointing, layer inputs + loss path. */
  training: number;
  /** With checkpointing: layer inputs + one layer recomputed (0 without checkpointing). */
  recompute: number;
  /** A no-grad forward (inference or the eval step): live tensors, logits, KV cache. */
  inference: number;
  notes: string[];
}

/** Families whose forward keeps a KV cache by default (use_cache=True) in a plain forward. */
const CACHING_DECODERS = new Set(["gpt2", "llama", "mistral", "qwen2"]);

function layerScaleFor(config: ModelConfig, c: Calibration, notes: string[]): number {
  const scales = c.activations.layerScale.value;
  const own = scales[config.family];
  if (own !== undefined) return own;
  const borrowed = c.activations.borrowedScale.value[config.family] ?? nearestMeasured(config);
  const scale = scales[borrowed];
  if (scale === undefined)
    throw new UserError(
      `calibration.json has no activation scale for ${config.family}`,
      "run bench/memory/fit-formula.mjs --write",
    );
  notes.push(
    `activation scale of ${config.family} borrowed from ${borrowed} (no ${config.family} cells measured)`,
  );
  return scale;
}

/** A family with no measured cells: the measured family of the same block kind. */
function nearestMeasured(config: ModelConfig): string {
  const s = config.structure;
  if (s.kind === "vit") return "vit";
  if (s.kind === "transformer" && s.crossAttentionLayers > 0) return "t5";
  return s.kind === "transformer" && s.gatedMlp ? "llama" : "gpt2";
}

/** Activations are calibrated under bf16/fp16 autocast; plain fp32 saves 32-bit tensors. */
function dtypeFactor(work: WorkSpec, c: Calibration): number {
  return work.amp === null && work.dtype === "float32" ? c.activations.fp32ActivationFactor.value : 1;
}

function activationBytes(work: WorkSpec, c: Calibration): number {
  return work.amp !== null
    ? c.bytesPerElement.value[work.amp === "bf16" ? "bfloat16" : "float16"]
    : c.bytesPerElement.value[work.dtype];
}

interface TokenShape {
  layers: number;
  hidden: number;
  ffn: number;
  gatedMlp: boolean;
  crossAttentionLayers: number;
  logitsVocab: number;
  kvWidth: number;
  caches: boolean;
}

function tokenShape(config: ModelConfig): TokenShape {
  const s = config.structure;
  if (s.kind === "transformer") {
    const t: TransformerStructure = s;
    return {
      layers: t.layers,
      hidden: t.hidden,
      ffn: t.ffn,
      gatedMlp: t.gatedMlp,
      crossAttentionLayers: t.crossAttentionLayers,
      logitsVocab: t.logitsVocab,
      kvWidth: t.kvHeads * t.headDim,
      caches: CACHING_DECODERS.has(config.family),
    };
  }
  if (s.kind === "vit")
    return {
      layers: s.layers,
      hidden: s.hidden,
      ffn: s.ffn,
      gatedMlp: false,
      crossAttentionLayers: 0,
      logitsVocab: 0,
      kvWidth: s.hidden,
      caches: false,
    };
  throw new Error("tokenShape called for a CNN");
}

function tokensPerSample(config: ModelConfig, work: WorkSpec): number {
  const s = config.structure;
  if (s.kind === "vit") {
    const side = work.imageSize ?? s.imageSize;
    return Math.floor(side / s.patch) ** 2 + 1;
  }
  if (work.seqLen === null) throw new UserError(`a ${config.family} model needs --seq-len`);
  return work.seqLen;
}

export function estimateActivations(
  config: ModelConfig,
  work: WorkSpec,
  batch: number,
  c: Calibration,
): ActivationTerms {
  if (config.structure.kind === "cnn") return cnnActivations(config.structure, work, batch, c);
  const notes: string[] = [];
  const shape = tokenShape(config);
  const tokens = batch * tokensPerSample(config, work);
  const st = c.activations.structure;
  const scale = layerScaleFor(config, c, notes) * dtypeFactor(work, c);
  const ffnBytes = shape.gatedMlp ? st.ffnBytesPerTokenGated : st.ffnBytesPerTokenPlain;
  const perLayerToken = scale * (st.hiddenBytesPerToken * shape.hidden + ffnBytes * shape.ffn);
  const crossPerToken = scale * st.crossAttentionBytesPerToken * shape.hidden * shape.crossAttentionLayers;
  // A frozen Linear saves no input for a weight gradient: LoRA keeps only part of each layer's tensors.
  const lora = work.task === "finetune-lora" || work.task === "finetune-qlora";
  const layerShare = lora ? c.activations.loraLayerFactor.value : 1;
  if (lora) notes.push("LoRA: frozen Linears keep no inputs for weight gradients (loraLayerFactor)");
  const layers = tokens * (shape.layers * perLayerToken + crossPerToken) * layerShare;
  const loss = tokens * shape.logitsVocab * c.activations.lossBytesPerTokenVocab.value;
  const inputs =
    tokens * shape.layers * shape.hidden * c.activations.checkpointedInputBytesPerTokenHidden.value;
  const actBytes = activationBytes(work, c);
  const live = tokens * c.activations.inferenceLiveLayers.value * (shape.hidden + shape.ffn) * actBytes;
  const logits = tokens * shape.logitsVocab * actBytes;
  const kvCache = shape.caches ? 2 * shape.layers * tokens * shape.kvWidth * actBytes : 0;
  notes.push("attention assumed SDPA/flash (no stored seq x seq scores)");
  return {
    training: work.gradCheckpointing ? inputs + loss : layers + loss,
    recompute: work.gradCheckpointing ? inputs + perLayerToken * tokens * layerShare : 0,
    inference: live + logits + kvCache,
    notes,
  };
}

/** Feature-map elements of every conv output for one square image of `side` pixels. */
function cnnFeatureElements(structure: CnnStructure, side: number): number {
  return structure.convOutputs.reduce(
    (sum, conv) => sum + conv.channels * Math.ceil(side * conv.scale) ** 2,
    0,
  );
}

function cnnActivations(
  structure: CnnStructure,
  work: WorkSpec,
  batch: number,
  c: Calibration,
): ActivationTerms {
  const side = work.imageSize ?? structure.imageSize;
  const elements = batch * cnnFeatureElements(structure, side);
  const notes = ["CNN activations from conv feature-map sizes"];
  if (work.gradCheckpointing) notes.push("gradient checkpointing not modelled for CNNs: estimate without it");
  const training = elements * c.activations.cnnBytesPerFeatureElement.value * dtypeFactor(work, c);
  // No-grad: about two feature maps alive at once; the largest map bounds it.
  const largest = Math.max(
    ...structure.convOutputs.map((conv) => conv.channels * Math.ceil(side * conv.scale) ** 2),
  );
  return {
    training,
    recompute: 0,
    inference: batch * largest * c.activations.inferenceLiveLayers.value * activationBytes(work, c),
    notes,
  };
}
