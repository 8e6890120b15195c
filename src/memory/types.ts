/**
 * The contract of `gpuprep memory`: what the user asks (a model and the work it does), what each
 * estimator returns (a breakdown in bytes), and the verdict against the device's usable memory.
 * Three producers fill `MemoryEstimate`: the trace tier (one step of the real model on fake
 * tensors in the target Python), the formula tier (the model's config and calibrated
 * coefficients, no torch needed) and the measured tier (real steps on the GPU). All byte counts
 * are bytes (not MiB, not GB) so no unit is ever guessed.
 */

export type MemoryTask = "train" | "finetune-lora" | "finetune-qlora" | "infer";
export type MemoryOptimizer = "adamw" | "adamw8bit" | "sgd" | "adafactor";
export type MemoryAmp = "bf16" | "fp16";
export type MemoryDtype = "float32" | "bfloat16" | "float16";

/** Where the model comes from. Weights are never needed: models are built from config or code. */
export type ModelSource =
  /** A config.json, or a Hugging Face-style directory holding one. `path` is absolute. */
  | { kind: "config"; path: string }
  /** A model name found in the local Hugging Face cache only (never downloaded); `path` is its config.json. */
  | { kind: "hf-cache"; name: string; path: string }
  /** `module:function` returning an nn.Module, imported with `cwd` first on sys.path. */
  | { kind: "factory"; spec: string; cwd: string };

export interface LoraSpec {
  rank: number;
  alpha: number;
  /** peft's lora_dropout: a dropout before each adapter keeps its mask and output for backward. */
  dropout: number;
  /** Module name suffixes that get adapters ("q_proj", "v_proj"); empty: every Linear but the output head. */
  targets: string[];
}

/** The work one step does. The batch is given separately, since searches vary it. */
export interface WorkSpec {
  task: MemoryTask;
  /** Autocast dtype; null: no autocast. */
  amp: MemoryAmp | null;
  /** The weights' dtype (float32 with AMP is the usual mixed-precision training). */
  dtype: MemoryDtype;
  optimizer: MemoryOptimizer;
  gradCheckpointing: boolean;
  /** Tokens per sample for sequence models; null for image models. */
  seqLen: number | null;
  /** Pixels per side for image models; null for sequence models. */
  imageSize: number | null;
  /** Also run one eval (no-grad) step at the same batch, and count its peak. */
  evalStep: boolean;
  /** For finetune-lora and finetune-qlora; null otherwise. */
  lora: LoraSpec | null;
}

/** Bytes by what holds them, at the step's peak. The parts sum to `MemoryEstimate.totalBytes`. */
export interface MemoryBreakdown {
  parameters: number;
  gradients: number;
  optimizerState: number;
  /** Tensors saved for backward (and, in inference, the live activations and KV cache). */
  activations: number;
  /** Workspaces and short-lived buffers alive at the peak that are none of the above. */
  temporaries: number;
  /** The CUDA context and loaded kernels: outside the caching allocator, seen only by nvidia-smi. */
  cudaContext: number;
  /** What the caching allocator reserves above what is allocated (fragmentation, block rounding). */
  allocatorOverhead: number;
}

type EstimateTier = "trace" | "formula" | "measured" | "scaled-rule";

export interface MemoryEstimate {
  tier: EstimateTier;
  batch: number;
  /** The allocator's peak: parameters + gradients + optimizerState + activations + temporaries. */
  peakAllocatedBytes: number;
  /** peakAllocatedBytes + cudaContext + allocatorOverhead: what the device must hold. */
  totalBytes: number;
  breakdown: MemoryBreakdown;
  parameterCount: number;
  trainableParameterCount: number;
  /** The tier's measured accuracy (from the accuracy benchmark), shown beside every figure of it. */
  accuracy: { medianAbsErrorPct: number; p95AbsErrorPct: number; source: string } | null;
  notes: string[];
}

/** The memory a step may use on the device, and where that figure came from. */
export interface DeviceBudget {
  name: string;
  totalBytes: number;
  /** Unified memory (GB10, Jetson): usable is MemAvailable, since cudaMemGetInfo counts the page cache as used. */
  unified: boolean;
  /** totalBytes, or MemAvailable on unified memory, less the safety margin. */
  usableBytes: number;
  marginFraction: number;
  /** "nvidia-smi memory.total", "/proc/meminfo MemAvailable (unified memory)", "KB gpus.json: <source>" */
  source: string;
}

export interface MemoryVerdict {
  fits: boolean;
  /** usableBytes - totalBytes: negative when it does not fit (then it is the memory missing). */
  headroomBytes: number;
  /** The largest batch of the searched range the estimate says fits; null when not even its smallest does. */
  maxBatch: number | null;
}

/** One real trial of the measured search, run in a fresh subprocess. */
export interface MeasuredTrial {
  batch: number;
  status: "ok" | "oom" | "error" | "timeout";
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  /** Median step time of the trial's training steps, in milliseconds. */
  stepMs: number | null;
  error: string | null;
}
