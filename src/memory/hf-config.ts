/**
 * Reads a Hugging Face config.json (or a directory holding one) into the model structure the
 * formula tier needs: its parameter tensors and the shapes that size its activations. Only the
 * families the accuracy benchmark covers are read; anything else is refused by name, since a
 * guessed structure would give a confident wrong number.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { UserError, errorMessage } from "../errors.js";
import { READ_LIMITS, readJsonFile } from "../util/safe-read.js";
import {
  type BertHead,
  type ConvOutput,
  type ParamGroup,
  bertParams,
  gpt2Params,
  llamaLikeParams,
  parameterCountOf,
  resnetParams,
  t5Params,
  vitParams,
} from "./model-params.js";

export const SUPPORTED_MODEL_TYPES = [
  "gpt2",
  "llama",
  "mistral",
  "qwen2",
  "bert",
  "t5",
  "vit",
  "resnet",
] as const;
type ModelFamily = (typeof SUPPORTED_MODEL_TYPES)[number];

/** Token-sequence models. Per-layer activations scale with tokens; the LM head's with tokens × vocab. */
export interface TransformerStructure {
  kind: "transformer";
  /** Layers every input token passes through (encoder-decoder: encoder + decoder). */
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ffn: number;
  /** SwiGLU/gated-GELU MLPs save two ffn-wide tensors where a plain MLP saves one. */
  gatedMlp: boolean;
  /** Vocabulary size when the model computes logits over it for every token; 0 for classifiers. */
  logitsVocab: number;
  /** T5: cross-attention layers (each also reads the encoder output). */
  crossAttentionLayers: number;
}

interface VisionTransformerStructure {
  kind: "vit";
  layers: number;
  hidden: number;
  heads: number;
  ffn: number;
  patch: number;
  /** config.image_size: the position embeddings are sized for it. */
  imageSize: number;
}

export interface CnnStructure {
  kind: "cnn";
  convOutputs: ConvOutput[];
  /** config.image_size is not part of ResNetConfig: ImageNet's 224 is the default the bench uses. */
  imageSize: number;
}

export interface ModelConfig {
  /** The config's model_type (one of SUPPORTED_MODEL_TYPES has an exact reader; any other is generic). */
  family: string;
  /** The head class, from config.architectures or the family default. */
  architecture: string;
  path: string;
  parameterCount: number;
  groups: ParamGroup[];
  structure: TransformerStructure | VisionTransformerStructure | CnnStructure;
}

type Json = Record<string, unknown>;

/** Field readers that name the file and field in their one-line error. */
class Fields {
  constructor(
    private readonly raw: Json,
    private readonly where: string,
  ) {}

  int(key: string, fallback?: number): number {
    const value = this.raw[key];
    if ((value === undefined || value === null) && fallback !== undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0)
      throw new UserError(
        `${this.where}: "${key}" is ${value === undefined ? "missing" : `not a positive integer (${JSON.stringify(value)})`}`,
        "is this the model's config.json as transformers saves it?",
      );
    return value;
  }

  intList(key: string, fallback: number[]): number[] {
    const value = this.raw[key];
    if (value === undefined || value === null) return fallback;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "number" || !Number.isInteger(v) || v <= 0))
      throw new UserError(`${this.where}: "${key}" is not a list of positive integers`);
    return value as number[];
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.raw[key];
    return typeof value === "boolean" ? value : fallback;
  }

  string(key: string, fallback: string): string {
    const value = this.raw[key];
    return typeof value === "string" ? value : fallback;
  }

  /** transformers sets num_labels from id2label; configs without it get the default of 2. */
  labels(): number {
    const id2label = this.raw["id2label"];
    if (id2label && typeof id2label === "object") return Object.keys(id2label).length;
    return this.int("num_labels", 2);
  }

  architecture(fallback: string): string {
    const list = this.raw["architectures"];
    return Array.isArray(list) && typeof list[0] === "string" ? list[0] : fallback;
  }
}

function configFile(path: string): string {
  try {
    return statSync(path).isDirectory() ? join(path, "config.json") : path;
  } catch (error) {
    throw new UserError(
      `cannot read model config ${path}: ${errorMessage(error)}`,
      "give a config.json or a directory holding one",
    );
  }
}

export function readModelConfig(path: string): ModelConfig {
  const file = configFile(path);
  // util/safe-read (issue 28): capped, regular files only, and no byte of a non-JSON file quoted.
  const raw = readJsonFile(file, { maxBytes: READ_LIMITS.modelConfig, hint: "give the model's config.json" });
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new UserError(`${file} is not a JSON object`, "give the model's config.json");
  return modelConfigFromJson(raw as Json, file);
}

export function modelConfigFromJson(raw: Json, file: string): ModelConfig {
  const modelType = raw["model_type"];
  const supported = SUPPORTED_MODEL_TYPES.join(", ");
  if (typeof modelType !== "string")
    throw new UserError(`${file}: no "model_type"`, `the formula tier reads config.json of: ${supported}`);
  if (!(SUPPORTED_MODEL_TYPES as readonly string[]).includes(modelType))
    throw new UserError(
      `${file}: model_type "${modelType}" is not one the formula tier knows`,
      `supported: ${supported}; other models need the trace tier (a Python with torch) or --factory`,
    );
  const f = new Fields(raw, `${file} (model_type ${modelType})`);
  const family = modelType as ModelFamily;
  const built = BUILDERS[family](f);
  return { family, path: file, parameterCount: parameterCountOf(built.groups), ...built };
}

type Built = Omit<ModelConfig, "family" | "path" | "parameterCount">;

function gpt2(f: Fields): Built {
  const hidden = f.int("n_embd");
  const layers = f.int("n_layer");
  const heads = f.int("n_head");
  const ffn = f.int("n_inner", 4 * hidden);
  const vocab = f.int("vocab_size");
  return {
    architecture: f.architecture("GPT2LMHeadModel"),
    groups: gpt2Params({
      vocab,
      positions: f.int("n_positions"),
      hidden,
      layers,
      ffn,
      tied: f.bool("tie_word_embeddings", true),
    }),
    structure: oneStackTransformer({ layers, hidden, heads, ffn, gatedMlp: false, logitsVocab: vocab }),
  };
}

/**
 * The structure of a transformer with one stack of layers (no cross-attention). kvHeads and headDim
 * default to plain multi-head attention (gpt2, bert); llama-like configs give their own.
 */
function oneStackTransformer(
  s: Omit<TransformerStructure, "kind" | "kvHeads" | "headDim" | "crossAttentionLayers"> &
    Partial<Pick<TransformerStructure, "kvHeads" | "headDim">>,
): TransformerStructure {
  // Spelled out, not spread, so the keys keep the order the --json output has always had.
  return {
    kind: "transformer",
    layers: s.layers,
    hidden: s.hidden,
    heads: s.heads,
    kvHeads: s.kvHeads ?? s.heads,
    headDim: s.headDim ?? s.hidden / s.heads,
    ffn: s.ffn,
    gatedMlp: s.gatedMlp,
    logitsVocab: s.logitsVocab,
    crossAttentionLayers: 0,
  };
}

/** llama, mistral and qwen2 share one layout; they differ in biases and tying defaults. */
function llamaLike(defaultArchitecture: string, qkvBiasOnly: boolean, tiedDefault: boolean) {
  return (f: Fields): Built => {
    const hidden = f.int("hidden_size");
    const heads = f.int("num_attention_heads");
    const kvHeads = f.int("num_key_value_heads", heads);
    const headDim = f.int("head_dim", Math.floor(hidden / heads));
    const layers = f.int("num_hidden_layers");
    const ffn = f.int("intermediate_size");
    const vocab = f.int("vocab_size");
    const shape = {
      vocab,
      hidden,
      layers,
      heads,
      kvHeads,
      headDim,
      ffn,
      tied: f.bool("tie_word_embeddings", tiedDefault),
      attentionBias: f.bool("attention_bias", false),
      qkvBiasOnly,
      mlpBias: f.bool("mlp_bias", false),
    };
    return {
      architecture: f.architecture(defaultArchitecture),
      groups: llamaLikeParams(shape),
      structure: oneStackTransformer({
        layers,
        hidden,
        heads,
        kvHeads,
        headDim,
        ffn,
        gatedMlp: true,
        logitsVocab: vocab,
      }),
    };
  };
}

const BERT_HEADS: Record<string, BertHead> = {
  BertForMaskedLM: "masked-lm",
  BertModel: "base",
  BertForSequenceClassification: "sequence-classification",
  BertForTokenClassification: "token-classification",
  BertForPreTraining: "pretraining",
};

function bert(f: Fields): Built {
  const architecture = f.architecture("BertForMaskedLM");
  const head = BERT_HEADS[architecture];
  if (!head)
    throw new UserError(
      `BERT head ${architecture} is not one the formula tier knows`,
      `known: ${Object.keys(BERT_HEADS).join(", ")}`,
    );
  const hidden = f.int("hidden_size");
  const heads = f.int("num_attention_heads");
  const layers = f.int("num_hidden_layers");
  const ffn = f.int("intermediate_size");
  const vocab = f.int("vocab_size");
  return {
    architecture,
    groups: bertParams({
      vocab,
      positions: f.int("max_position_embeddings"),
      typeVocab: f.int("type_vocab_size", 2),
      hidden,
      layers,
      ffn,
      tied: f.bool("tie_word_embeddings", true),
      head,
      labels: f.labels(),
    }),
    structure: oneStackTransformer({
      layers,
      hidden,
      heads,
      ffn,
      gatedMlp: false,
      logitsVocab: head === "masked-lm" || head === "pretraining" ? vocab : 0,
    }),
  };
}

function t5(f: Fields): Built {
  const dModel = f.int("d_model");
  const heads = f.int("num_heads");
  const dKv = f.int("d_kv");
  const encoderLayers = f.int("num_layers");
  const decoderLayers = f.int("num_decoder_layers", encoderLayers);
  const ffn = f.int("d_ff");
  const vocab = f.int("vocab_size");
  const gated = f.string("feed_forward_proj", "relu").startsWith("gated-");
  return {
    architecture: f.architecture("T5ForConditionalGeneration"),
    groups: t5Params({
      vocab,
      dModel,
      dKv,
      heads,
      ffn,
      encoderLayers,
      decoderLayers,
      gated,
      buckets: f.int("relative_attention_num_buckets", 32),
      tied: f.bool("tie_word_embeddings", true),
    }),
    structure: {
      kind: "transformer",
      layers: encoderLayers + decoderLayers,
      hidden: dModel,
      heads,
      kvHeads: heads,
      headDim: dKv,
      ffn,
      gatedMlp: gated,
      logitsVocab: vocab,
      crossAttentionLayers: decoderLayers,
    },
  };
}

function vit(f: Fields): Built {
  const hidden = f.int("hidden_size");
  const layers = f.int("num_hidden_layers");
  const ffn = f.int("intermediate_size");
  const patch = f.int("patch_size");
  const imageSize = f.int("image_size");
  return {
    architecture: f.architecture("ViTForImageClassification"),
    groups: vitParams({
      hidden,
      layers,
      ffn,
      channels: f.int("num_channels", 3),
      patch,
      imageSize,
      qkvBias: f.bool("qkv_bias", true),
      labels: f.labels(),
    }),
    structure: { kind: "vit", layers, hidden, heads: f.int("num_attention_heads"), ffn, patch, imageSize },
  };
}

function resnet(f: Fields): Built {
  const layerType = f.string("layer_type", "bottleneck");
  if (layerType !== "bottleneck" && layerType !== "basic")
    throw new UserError(`ResNet layer_type "${layerType}" is not "basic" or "bottleneck"`);
  const { groups, convOutputs } = resnetParams({
    channels: f.int("num_channels", 3),
    embedding: f.int("embedding_size", 64),
    hiddenSizes: f.intList("hidden_sizes", [256, 512, 1024, 2048]),
    depths: f.intList("depths", [3, 4, 6, 3]),
    bottleneck: layerType === "bottleneck",
    downsampleInFirstStage: f.bool("downsample_in_first_stage", false),
    downsampleInBottleneck: f.bool("downsample_in_bottleneck", false),
    labels: f.labels(),
  });
  return {
    architecture: f.architecture("ResNetForImageClassification"),
    groups,
    structure: { kind: "cnn", convOutputs, imageSize: 224 },
  };
}

const BUILDERS: Record<ModelFamily, (f: Fields) => Built> = {
  gpt2,
  llama: llamaLike("LlamaForCausalLM", false, false),
  mistral: llamaLike("MistralForCausalLM", false, false),
  qwen2: llamaLike("Qwen2ForCausalLM", true, false),
  bert,
  t5,
  vit,
  resnet,
};
