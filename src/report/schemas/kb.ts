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
  packageRequirementsRowSchema,
  sourceSchema,
  torchBuildRowSchema,
} from "../../kb/schema.js";
import type {
  GpuDriverFloor,
  NgcImageVerdict,
  NgcRunsOnEntry,
  PackageRequirementsAnswer,
  TorchBuildEvaluation,
} from "../../kb/index.js";
import type { Same } from "../../util/same-type.js";

const DriverSupportSchema = z.enum(["native", "minor-compat", "unsupported"]);
const CoverageRuleSchema = z.enum(["arch-list", "run", "stated-floor", "jetpack"]);
const CoverageEntrySchema = z.object({ computeCapability: z.string(), rule: CoverageRuleSchema });

const RunsOnEntrySchema = z.object({
  computeCapability: z.string(),
  how: z.enum(["sass", "ptx-jit", "jetpack", "run-only"]),
  rule: CoverageRuleSchema,
  derived: z.boolean(),
});

const GpuDriverFloorSchema = z.object({
  gpu: z.string(),
  computeCapability: z.string(),
  minDriverLinux: z.string().nullable(),
  basis: z.enum(["gpu-stated", "gpu-shipped", "architecture", "jetpack"]).nullable(),
  derived: z.boolean(),
  lastDriverBranch: z.string().nullable(),
  reason: z.string(),
  sources: z.array(sourceSchema),
});

const PackageRequirementsAnswerSchema = z.object({
  package: z.string(),
  version: z.string().nullable(),
  status: z.enum(["found", "not-in-table", "absent"]),
  rows: z.array(packageRequirementsRowSchema),
  requiresPython: z.string().nullable(),
  torch: z.string().nullable(),
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
  topic(
    "gpu",
    z.object({
      gpu: gpuRowSchema,
      arch: archRowSchema.nullable(),
      variants: z.array(gpuRowSchema),
      driverFloor: GpuDriverFloorSchema,
    }),
  ),
  topic("cuda", cudaToolkitRowSchema),
  topic("torch", z.array(torchBuildRowSchema)),
  // `kb ngc TAG`: one image with the capabilities it covers; `kb ngc`: every image.
  topic(
    "ngc",
    z.union([
      ngcImageRowSchema.extend({
        covers: z.object({ x86_64: z.array(CoverageEntrySchema), aarch64: z.array(CoverageEntrySchema) }),
        runsOn: z.object({
          amd64: z.array(RunsOnEntrySchema),
          arm64: z.array(RunsOnEntrySchema),
          igpu: z.array(RunsOnEntrySchema),
        }),
      }),
      z.array(ngcImageRowSchema),
    ]),
  ),
  topic("ext", extensionRowSchema),
  topic("pkg", PackageRequirementsAnswerSchema),
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
  Same<z.infer<typeof RunsOnEntrySchema>, NgcRunsOnEntry>,
  Same<z.infer<typeof GpuDriverFloorSchema>, GpuDriverFloor>,
  Same<z.infer<typeof PackageRequirementsAnswerSchema>, PackageRequirementsAnswer>,
] = [true, true, true, true, true];
void agree;
