/**
 * `gpuprep memory`'s input: its flags, and turning them into the work, the batch range and the
 * model source (a config.json, a Hugging Face cache entry, or a factory), each refused in one line.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { READ_LIMITS, readJsonFile, readTextFile } from "../util/safe-read.js";
import type { ModelSource, WorkSpec } from "../memory/types.js";
import type { OptionTable, ValuesOf } from "./command.js";

const MODEL = "the model (weights are never read)";
const WORK = "the work";
const MACHINE = "the machine (default: this one, as doctor sees it)";
const HOW = "how";
const SEED = "seed 001's rule (scale a batch that ran)";
const OUTPUT = "output";

export const OPTIONS = {
  model: {
    type: "string",
    value: "X",
    description:
      "a config.json, a directory holding one, or a model name in the local\nHugging Face cache (never downloaded)",
    group: MODEL,
  },
  factory: {
    type: "string",
    value: "M:F",
    description:
      "call F() from module M (imported from the current directory); it returns an\nnn.Module, or (model, make_inputs) with make_inputs(batch, device)",
    group: MODEL,
  },
  task: {
    type: "string",
    value: "T",
    description: "train (default) | finetune-lora | finetune-qlora | infer",
    group: WORK,
  },
  amp: { type: "string", value: "bf16|fp16", description: "autocast dtype (default: none)", group: WORK },
  dtype: {
    type: "string",
    value: "D",
    description:
      "float32 | bfloat16 | float16 (default: float32 for training; for LoRA/QLoRA the\nconfig's torch_dtype, as from_pretrained loads the frozen weights)",
    group: WORK,
  },
  optimizer: {
    type: "string",
    value: "O",
    description: "adamw (default) | adamw8bit | sgd | adafactor",
    group: WORK,
  },
  "grad-checkpointing": { type: "boolean", description: "activation checkpointing", group: WORK },
  "seq-len": { type: "string", value: "N", description: "tokens per sample (default 512)", group: WORK },
  "image-size": { type: "string", value: "N", description: "pixels per side", group: WORK },
  batch: {
    type: "string",
    value: "N | A..B",
    description: "one batch, or the range to search (default 1..1024)",
    group: WORK,
  },
  "lora-rank": { type: "string", value: "R", description: "(finetune-lora; default 16)", group: WORK },
  "lora-alpha": { type: "string", value: "A", description: "(finetune-lora; default 2R)", group: WORK },
  "lora-dropout": {
    type: "string",
    value: "P",
    description: "(finetune-lora; default 0.05, as peft's recipes use)",
    group: WORK,
  },
  adapter: {
    type: "string",
    value: "FILE",
    description:
      "a peft adapter_config.json (or its directory): its r, lora_alpha,\nlora_dropout and target_modules",
    group: WORK,
  },
  "lora-targets": {
    type: "string",
    value: "q_proj,v_proj",
    description: "(finetune-lora; default all)",
    group: WORK,
  },
  eval: { type: "boolean", description: "also run an eval step at the same batch", group: WORK },
  target: {
    type: "string",
    value: "NAME",
    description: 'a GPU from the knowledge base ("H100 SXM", "GB10")',
    group: MACHINE,
    setting: { key: "target", unless: ["from", "save", "container", "image", "ssh"] },
  },
  from: {
    type: "string",
    value: "FILE",
    description: "a facts snapshot written by --save (doctor's, init's or this one's);\nnothing is gathered",
    group: MACHINE,
  },
  save: {
    type: "string",
    value: "FILE",
    description: "also write the facts gathered for the machine to FILE (for --from)",
    group: MACHINE,
  },
  python: { type: "string", value: "PATH", description: "where the target Python runs", group: MACHINE },
  container: { type: "string", value: "NAME", description: "where the target Python runs", group: MACHINE },
  image: { type: "string", value: "REF", description: "where the target Python runs", group: MACHINE },
  ssh: { type: "string", value: "HOST", description: "where the target Python runs", group: MACHINE },
  tier: {
    type: "string",
    value: "T",
    description: "trace | formula | auto (default: trace where torch >= 2.5, else formula)",
    group: HOW,
  },
  measure: {
    type: "boolean",
    description: "also search on the real GPU: real steps, each trial a fresh process",
    group: HOW,
  },
  margin: {
    type: "string",
    value: "F",
    description: "memory kept free, fraction of the card (default 0.05)",
    group: HOW,
  },
  timeout: {
    type: "string",
    value: "S",
    description: "seconds per traced step or trial before it is killed (default 600 / 300)",
    group: HOW,
  },
  // Tests only: run trials on the CPU (their "memory" is the process's RSS).
  "trial-device": {
    type: "string",
    value: "cuda|cpu",
    description: "where --measure's trials run (default cuda; cpu is for tests: RSS, not GPU memory)",
    group: HOW,
  },
  "current-batch": {
    type: "string",
    value: "N",
    description: "the batch that ran, with --current-memory or --pid",
    group: SEED,
  },
  "current-memory": { type: "string", value: "GiB", description: "the memory it used", group: SEED },
  pid: { type: "string", value: "PID", description: "or its use from nvidia-smi", group: SEED },
  json: {
    type: "boolean",
    description: 'the report as JSON ("gpuprep.memory", version 1)',
    group: OUTPUT,
  },
  html: { type: "string", value: "FILE", description: "also write the report as HTML", group: OUTPUT },
} as const satisfies OptionTable;

export type Values = ValuesOf<typeof OPTIONS>;

export function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UserError(
      `memory: --${flag} ${value} is not one of ${allowed.join(", ")}`,
      `pass --${flag} ${allowed[0]}`,
    );
  }
  return value as T;
}

export function positiveInt(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new UserError(`memory: --${flag} ${value} is not a positive whole number`, `e.g. --${flag} 8`);
  }
  return Number(value);
}

export function positiveNumber(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UserError(`memory: --${flag} ${value} is not a positive number`, `e.g. --${flag} 10`);
  return n;
}

export function parseBatch(value: string | undefined): { min: number; max: number; range: boolean } {
  if (value === undefined) return { min: 1, max: 1024, range: true };
  const range = /^(\d+)\.\.(\d+)$/.exec(value);
  if (range) {
    const min = Number(range[1]);
    const max = Number(range[2]);
    if (min >= 1 && max >= min) return { min, max, range: true };
  } else if (/^\d+$/.test(value) && Number(value) >= 1) {
    return { min: Number(value), max: Number(value), range: false };
  }
  throw new UserError(
    `memory: --batch ${value} is neither a batch nor a range`,
    "e.g. --batch 8 or --batch 1..512",
  );
}

export function workSpec(values: Values, config: Record<string, unknown> | null = null): WorkSpec {
  const task = oneOf(
    "task",
    values.task,
    ["train", "finetune-lora", "finetune-qlora", "infer"] as const,
    "train",
  );
  const amp = values.amp === undefined ? null : oneOf("amp", values.amp, ["bf16", "fp16"] as const, "bf16");
  const adapterTask = task === "finetune-lora" || task === "finetune-qlora";
  const dtype = oneOf(
    "dtype",
    values.dtype,
    ["float32", "bfloat16", "float16"] as const,
    adapterTask ? configDtype(config) : "float32",
  );
  const optimizer = oneOf(
    "optimizer",
    values.optimizer,
    ["adamw", "adamw8bit", "sgd", "adafactor"] as const,
    "adamw",
  );
  const imageSize = positiveInt("image-size", values["image-size"]);
  const seqLen = positiveInt("seq-len", values["seq-len"]) ?? (imageSize === null ? 512 : null);
  const lora = adapterTask ? loraSpec(values) : null;
  if (
    lora === null &&
    (values["lora-rank"] || values["lora-targets"] || values["lora-dropout"] || values.adapter)
  ) {
    throw new UserError(
      "memory: --lora-rank/--lora-targets/--lora-dropout/--adapter apply to --task finetune-lora or finetune-qlora",
      "add --task finetune-lora",
    );
  }
  return {
    task,
    amp,
    dtype,
    optimizer,
    gradCheckpointing: values["grad-checkpointing"] === true,
    seqLen,
    imageSize,
    evalStep: values.eval === true,
    lora,
  };
}

/** The dtype config.json says the weights are stored in (torch_dtype, or dtype in transformers 5). */
function configDtype(config: Record<string, unknown> | null): "float32" | "bfloat16" | "float16" {
  const text = config ? (config["torch_dtype"] ?? config["dtype"]) : undefined;
  return text === "bfloat16" || text === "float16" || text === "float32" ? text : "float32";
}

/** The adapters: an adapter_config.json's fields, then the flags over them, then peft-like defaults. */
function loraSpec(values: Values): WorkSpec["lora"] {
  const file = values.adapter !== undefined ? readAdapterConfig(values.adapter) : {};
  const rank = positiveInt("lora-rank", values["lora-rank"]) ?? file.rank ?? 16;
  const alpha = positiveNumber("lora-alpha", values["lora-alpha"]) ?? file.alpha ?? 2 * rank;
  const dropout = fraction("lora-dropout", values["lora-dropout"]) ?? file.dropout ?? 0.05;
  const flagTargets = (values["lora-targets"] ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const targets = flagTargets.length > 0 ? flagTargets : (file.targets ?? []);
  return { rank, alpha, dropout, targets };
}

function fraction(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n >= 1)
    throw new UserError(`memory: --${flag} ${value} is not a fraction in [0, 1)`, `e.g. --${flag} 0.05`);
  return n;
}

interface AdapterFields {
  rank?: number;
  alpha?: number;
  dropout?: number;
  targets?: string[];
}

/** peft's adapter_config.json: r, lora_alpha, lora_dropout, target_modules (a list, or "all-linear"). */
function readAdapterConfig(path: string): AdapterFields {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, "adapter_config.json") : path;
  // util/safe-read, as for config.json: capped, regular files only, never quoted back.
  const data = readJsonFile(file, {
    maxBytes: READ_LIMITS.adapterConfig,
    hint: "pass a peft adapter_config.json, or the directory holding one",
    origin: `memory: --adapter ${file}`,
  });
  const raw = (data && typeof data === "object" ? data : {}) as Record<string, unknown>;
  if (raw["peft_type"] !== undefined && raw["peft_type"] !== "LORA")
    throw new UserError(
      `memory: --adapter ${file} is a ${typeof raw["peft_type"] === "string" ? raw["peft_type"] : JSON.stringify(raw["peft_type"])} adapter, not LoRA`,
      "gpuprep sizes LoRA adapters",
    );
  const number = (key: string) => (typeof raw[key] === "number" ? raw[key] : undefined);
  const modules = raw["target_modules"];
  const targets = Array.isArray(modules)
    ? modules.filter((m): m is string => typeof m === "string")
    : typeof modules === "string" && modules !== "all-linear"
      ? [modules]
      : undefined;
  return { rank: number("r"), alpha: number("lora_alpha"), dropout: number("lora_dropout"), targets };
}

/** The model source, checked here so a wrong path is one line before any Python starts. */
export function modelSource(
  values: Values,
  env: NodeJS.ProcessEnv = process.env,
): ModelSource & { data?: Record<string, unknown> } {
  if ((values.model === undefined) === (values.factory === undefined)) {
    throw new UserError(
      "memory: name the model with one of --model or --factory",
      "e.g. --model ./my-model/config.json",
    );
  }
  if (values.factory !== undefined) {
    if (!/^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/.test(values.factory)) {
      throw new UserError(
        `memory: --factory ${values.factory} is not module:function`,
        "e.g. --factory my_models:build",
      );
    }
    return { kind: "factory", spec: values.factory, cwd: process.cwd() };
  }
  const given = values.model as string;
  const local = resolve(given);
  if (existsSync(local)) {
    const path = statSync(local).isDirectory() ? join(local, "config.json") : local;
    return { kind: "config", path, data: readConfig(path) };
  }
  if (given.includes("/") && !/^[\w.-]+\/[\w.-]+$/.test(given)) {
    throw new UserError(
      `memory: --model ${given} does not exist`,
      "pass a config.json, a model directory or a cached model name",
    );
  }
  const cached = hfCacheConfig(given, env);
  if (cached === null) {
    throw new UserError(
      `memory: --model ${given} is neither a path nor a model in the local Hugging Face cache`,
      "gpuprep never downloads: pass the model's config.json, or fetch it once with huggingface-cli",
    );
  }
  return { kind: "hf-cache", name: given, path: cached.path, data: readConfig(cached.path, cached.root) };
}

function readConfig(path: string, confineTo?: string): Record<string, unknown> {
  // util/safe-read: a FIFO, a device or a 300 MB file is one line, and a file that is not JSON
  // is never quoted back (a linked /etc/shadow stays unread in the error).
  const data = readJsonFile(path, {
    maxBytes: READ_LIMITS.modelConfig,
    hint: "pass a Hugging Face config.json, or a directory holding one",
    origin: `memory: ${path}`,
    ...(confineTo === undefined ? {} : { confineTo }),
  });
  if (
    !data ||
    typeof data !== "object" ||
    typeof (data as { model_type?: unknown }).model_type !== "string"
  ) {
    throw new UserError(
      `memory: ${path} has no "model_type": not a Hugging Face config.json`,
      "pass the model's config.json",
    );
  }
  return data as Record<string, unknown>;
}

/**
 * HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub: models--ORG--NAME/snapshots/<rev>/config.json,
 * and the model's cache directory (`root`) the config must stay in: snapshots link into
 * ../../blobs, and a planted link or a refs/main of `../../..` must not lead elsewhere.
 */
export function hfCacheConfig(name: string, env: NodeJS.ProcessEnv): { path: string; root: string } | null {
  const hub =
    env.HF_HUB_CACHE ??
    join(env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "huggingface"), "hub");
  const root = join(hub, `models--${name.replace(/\//g, "--")}`);
  const snapshots = join(root, "snapshots");
  let revisions: string[];
  try {
    revisions = readdirSync(snapshots);
  } catch {
    return null;
  }
  // The revision refs/main points at, else any snapshot that has a config.
  const main = mainRevision(root);
  for (const rev of main ? [main, ...revisions] : revisions) {
    const path = join(snapshots, rev, "config.json");
    if (existsSync(path)) return { path, root };
  }
  return null;
}

/**
 * refs/main: the commit hash huggingface_hub writes there (40 hex digits), read through
 * util/safe-read; anything else (a FIFO, /dev/zero, a path) is ignored as if there were none.
 */
function mainRevision(root: string): string | null {
  try {
    const text = readTextFile(join(root, "refs", "main"), {
      maxBytes: READ_LIMITS.hfRef,
      hint: "",
      confineTo: root,
    }).trim();
    return /^[0-9a-f]{40}$/.test(text) ? text : null;
  } catch {
    return null;
  }
}
