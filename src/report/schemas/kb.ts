/**
 * `gpuprep kb … --json`: { topic, result }, one shape of result per topic, made of the knowledge
 * base's own row schemas (src/kb/schema.ts), so the JSON Schema says what each topic prints.
 */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { KB_SCHEMA, KB_SCHEMA_VERSION } from "../document-ids.js";
import {
  archRowSchema,
  cudaToolkitRowSchema,
  extensionRowSchema,
  gpuRowSchema,
  ngcImageRowSchema,
  torchBuildRowSchema,
} from "../../kb/schema.js";
import type { NgcImageVerdict, TorchBuildEvaluation } from "../../kb/index.js";
import type { Same } from "../../util/same-type.js";

const DriverSupportSchema = z.enum(["native", "minor-compat", "unsupported"]);
const CoverageEntrySchema = z.object({
  computeCapability: z.string(),
  rule: z.enum(["run", "stated-floor"]),
});

const TorchBuildEvaluationSchema = z.object({
  choices: z.array(
    z.object({
      build: torchBuildRowSchema,
      runs: z.enum(["sass", "ptx-jit"]),
      via: z.array(z.string()),
      driver: DriverSupportSchema,
      pip: z.string(),
      uv: z.string(),
      reasons: z.array(z.string()),
    }),
  ),
  rejected: z.array(z.object({ build: torchBuildRowSchema, reason: z.string() })),
});

const NgcImageVerdictSchema = z.object({
  image: ngcImageRowSchema,
  runs: z.boolean(),
  driver: DriverSupportSchema.nullable(),
  reason: z.string(),
});

/** One variant per topic: the envelope, the topic's name, its result. */
function topic<Name extends string, Result extends z.ZodType>(name: Name, result: Result) {
  return z.object({ ...envelopeShape(KB_SCHEMA, KB_SCHEMA_VERSION), topic: z.literal(name), result });
}

export const KbDocumentSchema = z.discriminatedUnion("topic", [
  topic("gpu", z.object({ gpu: gpuRowSchema, arch: archRowSchema.nullable() })),
  topic("cuda", cudaToolkitRowSchema),
  topic("torch", z.array(torchBuildRowSchema)),
  // `kb ngc TAG`: one image with the capabilities it covers; `kb ngc`: every image.
  topic(
    "ngc",
    z.union([
      ngcImageRowSchema.extend({
        covers: z.object({ x86_64: z.array(CoverageEntrySchema), aarch64: z.array(CoverageEntrySchema) }),
      }),
      z.array(ngcImageRowSchema),
    ]),
  ),
  topic("ext", extensionRowSchema),
  topic(
    "resolve",
    z.object({
      gpu: gpuRowSchema,
      query: z.object({
        computeCapability: z.string(),
        driverVersion: z.string(),
        cpuArch: z.enum(["x86_64", "aarch64"]),
        python: z.string().optional(),
      }),
      torch: TorchBuildEvaluationSchema,
      ngc: z.array(NgcImageVerdictSchema),
    }),
  ),
  topic(
    "update",
    z.object({
      overlay: z.string(),
      indexUrl: z.string(),
      builds: z.number().int(),
      releases: z.array(z.string()),
    }),
  ),
]);

const agree: [
  Same<z.infer<typeof TorchBuildEvaluationSchema>, TorchBuildEvaluation>,
  Same<z.infer<typeof NgcImageVerdictSchema>, NgcImageVerdict>,
] = [true, true];
void agree;
