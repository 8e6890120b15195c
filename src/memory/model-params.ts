/**
 * The parameter tensors of each supported Hugging Face model family, derived from its config the
 * way the transformers modeling code builds the modules (transformers 5.18's modeling_*.py).
 * Tensors are listed by module path and shape so that every byte rule downstream (LoRA targets,
 * QLoRA's quantized Linears, Adafactor's factored states) reads one source. The counts are checked
 * against real models built on the meta device (test/fixtures/memory/hf-param-counts.json).
 */

export type ParamRole = "embedding" | "linear" | "norm" | "conv" | "head" | "other";

/** `count` tensors of one shape (one per layer, usually). Biases are folded into their module. */
export interface ParamGroup {
  /** Module path inside one layer or the model, as PEFT matches it: "attn.c_attn", "mlp.down_proj". */
  path: string;
  role: ParamRole;
  /** The weight's shape; a Linear is [out, in] (GPT-2's Conv1D too, normalised here). */
  shape: number[];
  /** Bias elements per tensor (0: none). */
  bias: number;
  count: number;
}

export const elementsOf = (shape: number[]): number => shape.reduce((a, b) => a * b, 1);

function groupParameterCount(group: ParamGroup): number {
  return (elementsOf(group.shape) + group.bias) * group.count;
}

export function parameterCountOf(groups: ParamGroup[]): number {
  return groups.reduce((sum, group) => sum + groupParameterCount(group), 0);
}

const linear = (path: string, inF: number, outF: number, bias: boolean, count: number): ParamGroup => ({
  path,
  role: "linear",
  shape: [outF, inF],
  bias: bias ? outF : 0,
  count,
});
const norm = (path: string, width: number, withBias: boolean, count: number): ParamGroup => ({
  path,
  role: "norm",
  shape: [width],
  bias: withBias ? width : 0,
  count,
});
const embedding = (path: string, rows: number, width: number): ParamGroup => ({
  path,
  role: "embedding",
  shape: [rows, width],
  bias: 0,
  count: 1,
});

interface DecoderShape {
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ffn: number;
  tied: boolean;
  attentionBias: boolean;
  /** Qwen2: q/k/v carry a bias, o_proj does not. */
  qkvBiasOnly: boolean;
  mlpBias: boolean;
}

/** LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM: RMSNorm (weight only), gated MLP. */
export function llamaLikeParams(s: DecoderShape): ParamGroup[] {
  const L = s.layers;
  const qkvBias = s.attentionBias || s.qkvBiasOnly;
  const groups = [
    embedding("embed_tokens", s.vocab, s.hidden),
    linear("self_attn.q_proj", s.hidden, s.heads * s.headDim, qkvBias, L),
    linear("self_attn.k_proj", s.hidden, s.kvHeads * s.headDim, qkvBias, L),
    linear("self_attn.v_proj", s.hidden, s.kvHeads * s.headDim, qkvBias, L),
    linear("self_attn.o_proj", s.heads * s.headDim, s.hidden, s.attentionBias, L),
    linear("mlp.gate_proj", s.hidden, s.ffn, s.mlpBias, L),
    linear("mlp.up_proj", s.hidden, s.ffn, s.mlpBias, L),
    linear("mlp.down_proj", s.ffn, s.hidden, s.mlpBias, L),
    norm("input_layernorm", s.hidden, false, L),
    norm("post_attention_layernorm", s.hidden, false, L),
    norm("norm", s.hidden, false, 1),
  ];
  if (!s.tied) groups.push({ ...linear("lm_head", s.hidden, s.vocab, false, 1), role: "head" });
  return groups;
}

/** GPT2LMHeadModel: learned positions, LayerNorm with bias, Conv1D projections with bias, GELU MLP. */
export function gpt2Params(s: {
  vocab: number;
  positions: number;
  hidden: number;
  layers: number;
  ffn: number;
  tied: boolean;
}): ParamGroup[] {
  const L = s.layers;
  const groups = [
    embedding("wte", s.vocab, s.hidden),
    embedding("wpe", s.positions, s.hidden),
    norm("ln_1", s.hidden, true, L),
    linear("attn.c_attn", s.hidden, 3 * s.hidden, true, L),
    linear("attn.c_proj", s.hidden, s.hidden, true, L),
    norm("ln_2", s.hidden, true, L),
    linear("mlp.c_fc", s.hidden, s.ffn, true, L),
    linear("mlp.c_proj", s.ffn, s.hidden, true, L),
    norm("ln_f", s.hidden, true, 1),
  ];
  if (!s.tied) groups.push({ ...linear("lm_head", s.hidden, s.vocab, false, 1), role: "head" });
  return groups;
}

/** BERT/ViT encoder layer: q/k/v/output dense with bias, two LayerNorms, GELU MLP. */
function bertLikeLayer(hidden: number, ffn: number, layers: number, qkvBias: boolean): ParamGroup[] {
  return [
    linear("attention.attention.query", hidden, hidden, qkvBias, layers),
    linear("attention.attention.key", hidden, hidden, qkvBias, layers),
    linear("attention.attention.value", hidden, hidden, qkvBias, layers),
    linear("attention.output.dense", hidden, hidden, true, layers),
    linear("intermediate.dense", hidden, ffn, true, layers),
    linear("output.dense", ffn, hidden, true, layers),
    norm("layernorm_a", hidden, true, layers),
    norm("layernorm_b", hidden, true, layers),
  ];
}

export type BertHead =
  "masked-lm" | "base" | "sequence-classification" | "token-classification" | "pretraining";

export function bertParams(s: {
  vocab: number;
  positions: number;
  typeVocab: number;
  hidden: number;
  layers: number;
  ffn: number;
  tied: boolean;
  head: BertHead;
  labels: number;
}): ParamGroup[] {
  const groups: ParamGroup[] = [
    embedding("embeddings.word_embeddings", s.vocab, s.hidden),
    embedding("embeddings.position_embeddings", s.positions, s.hidden),
    embedding("embeddings.token_type_embeddings", s.typeVocab, s.hidden),
    norm("embeddings.LayerNorm", s.hidden, true, 1),
    ...bertLikeLayer(s.hidden, s.ffn, s.layers, true),
  ];
  // The pooler exists in BertModel and the heads built on it with add_pooling_layer=True.
  if (s.head === "base" || s.head === "sequence-classification" || s.head === "pretraining")
    groups.push(linear("pooler.dense", s.hidden, s.hidden, true, 1));
  if (s.head === "masked-lm" || s.head === "pretraining") {
    groups.push(linear("cls.predictions.transform.dense", s.hidden, s.hidden, true, 1));
    groups.push(norm("cls.predictions.transform.LayerNorm", s.hidden, true, 1));
    // The decoder's weight is the word embedding when tied; its bias (one per vocab entry) is its own.
    groups.push({
      path: "cls.predictions.decoder",
      role: "head",
      shape: s.tied ? [] : [s.vocab, s.hidden],
      bias: s.vocab,
      count: 1,
    });
  }
  if (s.head === "pretraining") groups.push(linear("cls.seq_relationship", s.hidden, 2, true, 1));
  if (s.head === "sequence-classification" || s.head === "token-classification")
    groups.push({ ...linear("classifier", s.hidden, s.labels, true, 1), role: "head" });
  return groups.map(fixEmptyShape);
}

/** A tied head has no weight of its own: shape [] would count as 1 element, so make it [0]. */
function fixEmptyShape(group: ParamGroup): ParamGroup {
  return group.shape.length === 0 ? { ...group, shape: [0] } : group;
}

/** T5ForConditionalGeneration: no biases anywhere, RMS-style LayerNorm, relative bias in block 0. */
export function t5Params(s: {
  vocab: number;
  dModel: number;
  dKv: number;
  heads: number;
  ffn: number;
  encoderLayers: number;
  decoderLayers: number;
  gated: boolean;
  buckets: number;
  tied: boolean;
}): ParamGroup[] {
  const inner = s.heads * s.dKv;
  const attention = (prefix: string, count: number): ParamGroup[] =>
    ["q", "k", "v"]
      .map((name) => linear(`${prefix}.${name}`, s.dModel, inner, false, count))
      .concat(linear(`${prefix}.o`, inner, s.dModel, false, count));
  const ff = (prefix: string, count: number): ParamGroup[] =>
    (s.gated
      ? [
          linear(`${prefix}.wi_0`, s.dModel, s.ffn, false, count),
          linear(`${prefix}.wi_1`, s.dModel, s.ffn, false, count),
        ]
      : [linear(`${prefix}.wi`, s.dModel, s.ffn, false, count)]
    ).concat(linear(`${prefix}.wo`, s.ffn, s.dModel, false, count));
  const E = s.encoderLayers;
  const D = s.decoderLayers;
  const groups: ParamGroup[] = [
    embedding("shared", s.vocab, s.dModel),
    ...attention("encoder.SelfAttention", E),
    ...ff("encoder.DenseReluDense", E),
    norm("encoder.layer_norm", s.dModel, false, 2 * E + 1),
    embedding("encoder.relative_attention_bias", s.buckets, s.heads),
    ...attention("decoder.SelfAttention", D),
    ...attention("decoder.EncDecAttention", D),
    ...ff("decoder.DenseReluDense", D),
    norm("decoder.layer_norm", s.dModel, false, 3 * D + 1),
    embedding("decoder.relative_attention_bias", s.buckets, s.heads),
  ];
  if (!s.tied) groups.push({ ...linear("lm_head", s.dModel, s.vocab, false, 1), role: "head" });
  return groups;
}

/** ViTForImageClassification (no pooler): patch conv, cls token, position embeddings, encoder, classifier. */
export function vitParams(s: {
  hidden: number;
  layers: number;
  ffn: number;
  channels: number;
  patch: number;
  imageSize: number;
  qkvBias: boolean;
  labels: number;
}): ParamGroup[] {
  const patches = Math.floor(s.imageSize / s.patch) ** 2;
  const groups: ParamGroup[] = [
    {
      path: "embeddings.patch_embeddings.projection",
      role: "conv",
      shape: [s.hidden, s.channels, s.patch, s.patch],
      bias: s.hidden,
      count: 1,
    },
    { path: "embeddings.cls_token", role: "other", shape: [1, 1, s.hidden], bias: 0, count: 1 },
    {
      path: "embeddings.position_embeddings",
      role: "other",
      shape: [1, patches + 1, s.hidden],
      bias: 0,
      count: 1,
    },
    ...bertLikeLayer(s.hidden, s.ffn, s.layers, s.qkvBias),
    norm("layernorm", s.hidden, true, 1),
  ];
  if (s.labels > 0) groups.push({ ...linear("classifier", s.hidden, s.labels, true, 1), role: "head" });
  return groups;
}

/** One convolution's output: channels × (spatial size), for the activation term of CNNs. */
export interface ConvOutput {
  channels: number;
  /** Output side length for a square input of side 1 (a fraction: 1/4 after the stem). */
  scale: number;
}

interface ResnetShape {
  channels: number;
  embedding: number;
  hiddenSizes: number[];
  depths: number[];
  bottleneck: boolean;
  downsampleInFirstStage: boolean;
  downsampleInBottleneck: boolean;
  labels: number;
}

/**
 * ResNetForImageClassification: every conv is bias-free and followed by a BatchNorm (weight + bias
 * are parameters; running statistics are buffers). Also returns each conv's output size, from which
 * the activation term is computed.
 */
export function resnetParams(s: ResnetShape): { groups: ParamGroup[]; convOutputs: ConvOutput[] } {
  const groups: ParamGroup[] = [];
  const convOutputs: ConvOutput[] = [];
  const conv = (path: string, inC: number, outC: number, k: number, scale: number) => {
    groups.push({ path, role: "conv", shape: [outC, inC, k, k], bias: 0, count: 1 });
    groups.push(norm(`${path}.normalization`, outC, true, 1));
    convOutputs.push({ channels: outC, scale });
  };
  // Stem: 7x7 stride-2 conv, then a stride-2 max pool.
  conv("embedder", s.channels, s.embedding, 7, 1 / 2);
  let scale = 1 / 4;
  let inC = s.embedding;
  s.hiddenSizes.forEach((outC, stage) => {
    const stageStride = stage === 0 && !s.downsampleInFirstStage ? 1 : 2;
    const depth = s.depths[stage] ?? 0;
    const outScale = scale / stageStride;
    for (let i = 0; i < depth; i++) {
      const stride = i === 0 ? stageStride : 1;
      const layerIn = i === 0 ? inC : outC;
      const inScale = i === 0 ? scale : outScale;
      const path = `stages.${stage}.layers.${i}`;
      if (layerIn !== outC || stride !== 1) conv(`${path}.shortcut`, layerIn, outC, 1, outScale);
      if (s.bottleneck) {
        const reduced = Math.floor(outC / 4);
        conv(`${path}.layer.0`, layerIn, reduced, 1, s.downsampleInBottleneck ? outScale : inScale);
        conv(`${path}.layer.1`, reduced, reduced, 3, outScale);
        conv(`${path}.layer.2`, reduced, outC, 1, outScale);
      } else {
        conv(`${path}.layer.0`, layerIn, outC, 3, outScale);
        conv(`${path}.layer.1`, outC, outC, 3, outScale);
      }
    }
    scale = outScale;
    inC = outC;
  });
  if (s.labels > 0) {
    const last = s.hiddenSizes[s.hiddenSizes.length - 1] ?? s.embedding;
    groups.push({ ...linear("classifier.1", last, s.labels, true, 1), role: "head" });
  }
  return { groups, convOutputs };
}
