/** `gpuprep memory --json`: the estimates, the verdict and the measured trials (src/memory/types.ts). */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION, type MemoryReport } from "../../memory/report-types.js";
import type { Same } from "../../util/same-type.js";

/** Bytes are whole numbers everywhere (issue 24). */
const Bytes = z.number().int();

const ModelSourceSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("config"), path: z.string() }),
  z.object({ kind: z.literal("hf-cache"), name: z.string(), path: z.string() }),
  z.object({ kind: z.literal("factory"), spec: z.string(), cwd: z.string() }),
]);

const WorkSpecSchema = z.object({
  task: z.enum(["train", "finetune-lora", "finetune-qlora", "infer"]),
  amp: z.enum(["bf16", "fp16"]).nullable(),
  dtype: z.enum(["float32", "bfloat16", "float16"]),
  optimizer: z.enum(["adamw", "adamw8bit", "sgd", "adafactor"]),
  gradCheckpointing: z.boolean(),
  seqLen: z.number().int().nullable(),
  imageSize: z.number().int().nullable(),
  evalStep: z.boolean(),
  lora: z
    .object({ rank: z.number(), alpha: z.number(), dropout: z.number(), targets: z.array(z.string()) })
    .nullable(),
});

const DeviceBudgetSchema = z.object({
  name: z.string(),
  totalBytes: Bytes,
  unified: z.boolean(),
  usableBytes: Bytes,
  marginFraction: z.number(),
  source: z.string(),
});

/** Bytes by what holds them at the step's peak; the parts sum to the estimate's totalBytes. */
const MemoryBreakdownSchema = z.object({
  parameters: Bytes,
  gradients: Bytes,
  optimizerState: Bytes,
  activations: Bytes,
  temporaries: Bytes,
  cudaContext: Bytes,
  allocatorOverhead: Bytes,
});

const MemoryEstimateSchema = z.object({
  tier: z.enum(["trace", "formula", "measured", "scaled-rule"]),
  batch: z.number().int(),
  peakAllocatedBytes: Bytes,
  totalBytes: Bytes,
  breakdown: MemoryBreakdownSchema,
  parameterCount: z.number(),
  trainableParameterCount: z.number(),
  accuracy: z
    .object({ medianAbsErrorPct: z.number(), p95AbsErrorPct: z.number(), source: z.string() })
    .nullable(),
  notes: z.array(z.string()),
});

const MeasuredTrialSchema = z.object({
  batch: z.number().int(),
  status: z.enum(["ok", "oom", "error", "timeout"]),
  peakAllocatedBytes: Bytes.nullable(),
  peakReservedBytes: Bytes.nullable(),
  stepMs: z.number().nullable(),
  error: z.string().nullable(),
});

const ScaledRuleSchema = z.object({
  currentBatch: z.number().int(),
  currentBytes: Bytes,
  currentSource: z.string(),
  maxBatch: z.number().int(),
  perSampleBytes: Bytes,
  formula: z.string(),
  offFromMeasuredPct: z.number().nullable(),
});

const MemoryBodySchema = z.object({
  model: z.object({ source: ModelSourceSchema, name: z.string(), parameterCount: z.number() }),
  work: WorkSpecSchema,
  device: DeviceBudgetSchema,
  estimates: z.array(MemoryEstimateSchema),
  verdict: z.object({ fits: z.boolean(), headroomBytes: Bytes, maxBatch: z.number().int().nullable() }),
  trials: z.array(MeasuredTrialSchema),
  measuredMaxBatch: z.number().int().nullable(),
  bestThroughputBatch: z.number().int().nullable(),
  scaledRule: ScaledRuleSchema.nullable(),
  searchRange: z.object({ min: z.number().int(), max: z.number().int() }),
  traceFallback: z.string().nullable(),
  alternatives: z.array(
    z.object({ change: z.string(), totalBytes: Bytes, batch: z.number().int(), fits: z.boolean() }),
  ),
  notes: z.array(z.string()),
});

export const MemoryReportSchema = z.object({
  ...envelopeShape(MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION),
  ...MemoryBodySchema.shape,
});

const agree: [Same<z.infer<typeof MemoryBodySchema>, MemoryReport>] = [true];
void agree;
