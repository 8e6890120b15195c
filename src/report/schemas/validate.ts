/** `gpuprep validate --json`: the judged checks and benchmarks, with the raw payload for `--from`. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { PayloadSchema } from "../../validate/payload.js";
import {
  REPORT_SCHEMA_ID,
  REPORT_SCHEMA_VERSION,
  type FeatureCell,
  type ValidateReport,
  type ValidationItem,
} from "../../validate/report.js";
import type { GpuPeak } from "../../validate/peaks.js";
import type { Same } from "../../util/same-type.js";
import { PEAK_FORMATS } from "../../kb/schema.js";

const StatusSchema = z.enum(["pass", "warn", "fail", "skip", "info"]);
const FigureSchema = z.object({ value: z.number(), unit: z.string() });

const ValidationItemSchema = z.object({
  id: z.string(),
  group: z.enum(["check", "benchmark"]),
  category: z.string(),
  title: z.string(),
  status: StatusSchema,
  reason: z.string(),
  measured: FigureSchema.optional(),
  reference: FigureSchema.extend({ what: z.string() }).optional(),
  ratio: z.number().optional(),
  /** Checks judged with doctor's rules (src/judge/): the rule's id and its page. */
  ruleId: z.string().optional(),
  docs: z.string().optional(),
  limits: z.object({ pass: z.number(), warn: z.number() }).optional(),
  provenance: z.object({ backend: z.string(), kernels: z.array(z.string()) }).optional(),
});

const PrecisionPeakSchema = z.union([
  z.object({ dense: z.number().nullable(), sparse: z.number().nullable() }),
  z.literal("not-on-arch"),
]);

const FeatureCellSchema = z.object({
  feature: z.string(),
  format: z.string().nullable(),
  arch: z.enum(["yes", "not-on-arch", "unknown"]),
  available: z.boolean().nullable(),
  ran: z.boolean(),
  ok: z.boolean().nullable(),
  measured: FigureSchema.optional(),
  peak: z.number().optional(),
  ratio: z.number().optional(),
  note: z.string(),
});

const GpuPeakSchema = z.object({
  name: z.string(),
  tflops: z.object({
    bf16: z.number().nullable(),
    fp16: z.number().nullable(),
    tf32: z.number().nullable(),
    fp32: z.number().nullable(),
  }),
  formats: z.partialRecord(z.enum(PEAK_FORMATS), PrecisionPeakSchema).optional(),
  memoryBandwidthGBs: z.number().nullable(),
  sources: z.array(z.string()),
});

export const ValidateReportSchema = z.object({
  ...envelopeShape(REPORT_SCHEMA_ID, REPORT_SCHEMA_VERSION),
  createdAt: z.string(),
  transport: z.string(),
  python: z.object({ executable: z.string(), version: z.string() }),
  torch: z.object({ version: z.string(), cuda: z.string().nullable() }).nullable(),
  gpu: z
    .object({ name: z.string(), computeCapability: z.string(), peak: GpuPeakSchema.nullable() })
    .nullable(),
  summary: z.object({
    pass: z.number().int(),
    warn: z.number().int(),
    fail: z.number().int(),
    skip: z.number().int(),
    info: z.number().int(),
  }),
  items: z.array(ValidationItemSchema),
  judgedAt: z.string().optional(),
  featureMatrix: z.array(FeatureCellSchema).optional(),
  payload: PayloadSchema,
});

const agree: [
  Same<z.infer<typeof ValidationItemSchema>, ValidationItem>,
  Same<z.infer<typeof GpuPeakSchema>, GpuPeak>,
  Same<z.infer<typeof FeatureCellSchema>, FeatureCell>,
  Same<z.infer<typeof ValidateReportSchema>, ValidateReport>,
] = [true, true, true, true];
void agree;
