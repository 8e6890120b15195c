/**
 * The formula tier for any config.json: the block structure read from the fields transformers'
 * configs share (hidden_size / d_model / n_embd, the layer counts of each stack, heads, key-value
 * heads, the MLP width or the experts' width times the experts each token visits, the vocabulary,
 * the image and patch sizes, CNN stage widths and depths), sub-configs (text_config,
 * vision_config) included. Parameters come from the model built on the meta device when the target
 * Python has torch (exact, memory.py parameter_groups); otherwise from the same fields, labelled
 * approximate. Families with their own exact reader (hf-config.ts) keep it.
 */
import { UserError } from "../errors.js";
import type { ModelConfig, TransformerStructure } from "./hf-config.js";
import { type ConvOutput, type ParamGroup, type ParamRole, parameterCountOf } from "./model-params.js";

type Json = Record<string, unknown>;

const first = (raw: Json, keys: string[]): number | null => {
  for (const key of keys) {
    const value = raw[key];
    if (typeof value === "number" && Number.isFinite(value) && value > 0) return Math.round(value);
  }
  return null;
};

const SUB_CONFIGS = ["text_config", "language_config", "llm_config", "decoder", "thinker_config"];

/** The config holding the token stack: a VLM's text_config, else the config itself. */
function textPart(raw: Json): Json {
  for (const key of SUB_CONFIGS) {
    const sub = raw[key];
    if (sub && typeof sub === "object" && !Array.isArray(sub)) return sub as Json;
  }
  return raw;
}

interface GenericShape {
  hidden: number;
  layers: number;
  crossLayers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  /** The MLP width one token passes through (experts: per expert x experts per token, + shared). */
  ffn: number;
  /** All expert MLP parameters per layer (for the weights), 0 without experts. */
  expertFfn: number;
  gated: boolean;
  vocab: number;
  tied: boolean;
}

/** The token stack's shape from the usual field names; null when the config has none of them. */
export function genericShape(raw: Json): GenericShape | null {
  const text = textPart(raw);
  const hidden = first(text, [
    "hidden_size",
    "d_model",
    "n_embd",
    "hidden_dim",
    "dim",
    "embed_dim",
    "model_dim",
  ]);
  if (hidden === null) return null;
  const encoder = first(text, ["encoder_layers", "num_encoder_layers"]) ?? 0;
  const decoder = first(text, ["decoder_layers", "num_decoder_layers"]) ?? 0;
  const single = first(text, ["num_hidden_layers", "num_layers", "n_layer", "n_layers"]) ?? 0;
  const layers = encoder + decoder > 0 ? encoder + decoder : single;
  if (layers === 0) return null;
  const heads =
    first(text, ["num_attention_heads", "n_head", "num_heads", "encoder_attention_heads", "n_heads"]) ?? 1;
  const kvHeads =
    first(text, ["num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"]) ?? heads;
  const headDim = first(text, ["head_dim", "d_kv", "kv_channels"]) ?? Math.max(1, Math.floor(hidden / heads));
  const dense =
    first(text, ["intermediate_size", "d_ff", "n_inner", "ffn_dim", "encoder_ffn_dim", "ffn_hidden_size"]) ??
    4 * hidden;
  const experts =
    first(text, ["num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"]) ?? 0;
  const perToken = first(text, ["num_experts_per_tok", "moe_topk", "top_k", "num_selected_experts"]) ?? 2;
  const expertWidth = first(text, ["moe_intermediate_size", "expert_intermediate_size"]) ?? dense;
  const shared = (first(text, ["n_shared_experts", "num_shared_experts"]) ?? 0) * expertWidth;
  const activation = text["hidden_act"] ?? text["hidden_activation"] ?? text["activation_function"];
  const act = typeof activation === "string" ? activation : "";
  const gated = /silu|swiglu|geglu|gelu_pytorch_tanh|swish/.test(act) || "gate_proj" in text;
  const vocab =
    first(text, ["vocab_size", "n_vocab", "padded_vocab_size"]) ?? first(raw, ["vocab_size"]) ?? 0;
  const tiedRaw = text["tie_word_embeddings"] ?? raw["tie_word_embeddings"];
  return {
    hidden,
    layers,
    crossLayers: decoder,
    heads,
    kvHeads,
    headDim,
    ffn: experts > 0 ? expertWidth * Math.min(perToken, experts) + shared : dense,
    expertFfn: experts > 0 ? expertWidth * experts + shared : 0,
    gated,
    vocab,
    tied: typeof tiedRaw === "boolean" ? tiedRaw : true,
  };
}

const linear = (path: string, inF: number, outF: number, count: number): ParamGroup => ({
  path,
  role: "linear",
  shape: [outF, inF],
  bias: 0,
  count,
});

/** Approximate parameter tensors of a generic transformer from its shape (no biases, one norm pair). */
function approximateGroups(s: GenericShape): ParamGroup[] {
  const L = s.layers;
  const mlpMats = s.gated ? 3 : 2;
  const groups: ParamGroup[] = [
    { path: "embed_tokens", role: "embedding", shape: [s.vocab, s.hidden], bias: 0, count: 1 },
    linear("self_attn.q_proj", s.hidden, s.heads * s.headDim, L),
    linear("self_attn.k_proj", s.hidden, s.kvHeads * s.headDim, L),
    linear("self_attn.v_proj", s.hidden, s.kvHeads * s.headDim, L),
    linear("self_attn.o_proj", s.heads * s.headDim, s.hidden, L),
    { path: "norms", role: "norm", shape: [s.hidden], bias: 0, count: 2 * L + 1 },
  ];
  const width = s.expertFfn > 0 ? s.expertFfn : s.ffn;
  for (let m = 0; m < mlpMats; m++)
    groups.push(linear(`mlp.${["up_proj", "down_proj", "gate_proj"][m]}`, s.hidden, width, L));
  if (s.crossLayers > 0) {
    for (const name of ["q", "k", "v", "o"])
      groups.push(linear(`encoder_attn.${name}_proj`, s.hidden, s.hidden, s.crossLayers));
  }
  if (!s.tied && s.vocab > 0)
    groups.push({ path: "lm_head", role: "head", shape: [s.vocab, s.hidden], bias: 0, count: 1 });
  return groups;
}

/** memory.py's meta-device parameter groups as the formula's tensors (exact counts and shapes). */
export function groupsFromMeta(
  facts: { path: string; shape: number[]; role: string; count: number }[],
): ParamGroup[] {
  const roles: ParamRole[] = ["embedding", "linear", "norm", "conv", "head", "other"];
  return facts.map((g) => {
    const role = (roles as string[]).includes(g.role) ? (g.role as ParamRole) : "other";
    const last = g.path.split(".").slice(-2, -1)[0] ?? g.path;
    return {
      path: g.path.replace(/\.(weight|bias)$/, "").replace(/\*\./g, "") || last,
      role,
      shape: g.shape.length ? g.shape : [1],
      bias: 0,
      count: g.count,
    };
  });
}

/** CNN stages (ResNet, ConvNeXt, RegNet, ...): hidden_sizes and depths, stem stride 4, then /2. */
function cnnOutputs(raw: Json): ConvOutput[] | null {
  const sizes = raw["hidden_sizes"];
  const depths = raw["depths"];
  if (!Array.isArray(sizes) || !Array.isArray(depths) || sizes.length !== depths.length) return null;
  const outputs: ConvOutput[] = [];
  sizes.forEach((channels, stage) => {
    const depth = Number(depths[stage]) || 0;
    const scale = 1 / (4 * 2 ** stage);
    // A block keeps about three feature maps of its stage's width (bottleneck / inverted bottleneck).
    for (let i = 0; i < 3 * depth; i++) outputs.push({ channels: Number(channels), scale });
  });
  return outputs;
}

/**
 * A ModelConfig for any config.json: block structure from the shared field names, parameters from
 * the meta-device build when given (exact), else from the fields (approximate, said in the notes).
 */
export function genericModelConfig(
  raw: Json,
  file: string,
  metaGroups: ParamGroup[] | null,
  architecture: string,
): ModelConfig & { approximateParameters: boolean } {
  const family = typeof raw["model_type"] === "string" ? raw["model_type"] : "unknown";
  const vision = (raw["vision_config"] as Json | undefined) ?? raw;
  const convs = cnnOutputs(raw);
  const imageSize = first(vision, ["image_size"]) ?? 224;
  if (convs) {
    const groups = metaGroups ?? [];
    return {
      family,
      architecture,
      path: file,
      parameterCount: parameterCountOf(groups),
      groups,
      structure: { kind: "cnn", convOutputs: convs, imageSize },
      approximateParameters: metaGroups === null,
    };
  }
  const shape = genericShape(raw);
  if (shape === null)
    throw new UserError(
      `${file}: model_type "${family}" has none of the fields the formula tier reads (hidden_size, num_hidden_layers, ...)`,
      "the trace tier (a Python with torch >= 2.5) sizes it; or pass --factory",
    );
  const groups = metaGroups ?? approximateGroups(shape);
  const patch = first(vision, ["patch_size"]);
  const tokenModel = shape.vocab > 0 && !/ImageClassification|ForImage|Vision(Model)?$/.test(architecture);
  const structure: TransformerStructure | ModelConfig["structure"] =
    !tokenModel && patch !== null
      ? {
          kind: "vit",
          layers: shape.layers,
          hidden: shape.hidden,
          heads: shape.heads,
          ffn: shape.ffn,
          patch,
          imageSize,
        }
      : {
          kind: "transformer",
          layers: shape.layers,
          hidden: shape.hidden,
          heads: shape.heads,
          kvHeads: shape.kvHeads,
          headDim: shape.headDim,
          ffn: shape.ffn,
          gatedMlp: shape.gated,
          logitsVocab: /CausalLM|LMHead|MaskedLM|ConditionalGeneration|PreTraining|ForCTC/.test(architecture)
            ? shape.vocab
            : 0,
          crossAttentionLayers: shape.crossLayers,
        };
  return {
    family,
    architecture,
    path: file,
    parameterCount: parameterCountOf(groups),
    groups,
    structure,
    approximateParameters: metaGroups === null,
  };
}
