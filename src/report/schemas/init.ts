/** `gpuprep init --json`: the plan (every decision with its reason and sources) and the files. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { INIT_SCHEMA, INIT_SCHEMA_VERSION } from "../document-ids.js";
import { RequirementSchema } from "../../facts/schema.js";
import { ngcImageRowSchema, torchBuildRowSchema } from "../../kb/schema.js";
import type { PlanDocument } from "../../plan/types.js";
import type { WriteStatus } from "../../generate/write.js";
import type { Same } from "../../util/same-type.js";

const DecisionSchema = z.object({
  topic: z.string(),
  choice: z.string(),
  reason: z.string(),
  sources: z.array(z.string()),
});

const ProtectedPackageSchema = z.object({
  name: z.string(),
  version: z.string().nullable(),
  why: z.string(),
});

const PlanSchema = z.object({
  lineChanges: z.array(z.object({ origin: z.string(), from: z.string(), to: z.string() })),
  project: z.object({
    dir: z.string(),
    name: z.string(),
    hasPyproject: z.boolean(),
    requirementsFiles: z.array(z.string()),
  }),
  target: z.object({
    origin: z.string(),
    gpuName: z.string(),
    computeCapability: z.string(),
    cpuArch: z.enum(["x86_64", "aarch64"]),
    driverVersion: z.string().nullable(),
    unifiedMemory: z.boolean(),
    python: z.string().nullable(),
    gpuPresent: z.boolean(),
    driverSource: DecisionSchema.optional(),
  }),
  strategy: z.enum(["container", "native"]),
  requiredDriver: z.string(),
  container: z
    .object({
      image: ngcImageRowSchema,
      ref: z.string(),
      protected: z.array(ProtectedPackageSchema),
      imports: z.array(z.string()),
      mirrorOf: z.string().optional(),
      digest: z.object({ value: z.string(), source: z.string() }).optional(),
    })
    .nullable(),
  native: z
    .object({
      build: torchBuildRowSchema,
      environment: z.enum(["uv", "pixi", "conda"]),
      python: z.string(),
      indexName: z.string(),
      protected: z.array(ProtectedPackageSchema),
    })
    .nullable(),
  install: z.array(RequirementSchema),
  conflicts: z.array(
    z.object({
      requirement: RequirementSchema.nullable(),
      pin: z.string().optional(),
      provided: z.string(),
      message: z.string(),
    }),
  ),
  sourceBuilds: z.array(
    z.object({
      name: z.string(),
      requirement: z.string(),
      archList: z.string(),
      env: z.record(z.string(), z.string()),
      reason: z.string(),
      inProject: z.boolean(),
      needsNvcc: z.boolean(),
    }),
  ),
  buildToolkit: z
    .object({ major: z.string(), minimum: z.string(), reason: z.string(), sources: z.array(z.string()) })
    .nullable(),
  jitToolchain: z
    .object({
      ptxasPath: z.string().nullable(),
      target: z.string(),
      minimumCuda: z.string(),
      variables: z.array(z.string()),
    })
    .nullable(),
  options: z.object({
    strategy: z.enum(["container", "native", "auto"]),
    jupyter: z.boolean(),
    nonRoot: z.boolean(),
    volumes: z.array(z.string()),
    buildFromSource: z.array(z.string()),
    wheelhouse: z.string().nullable(),
    indexUrl: z.string().nullable(),
    shmSize: z.string().nullable(),
    python: z.string().nullable(),
  }),
  decisions: z.array(DecisionSchema),
  warnings: z.array(z.string()),
});

const WriteStatusSchema = z.enum(["create", "unchanged", "update", "edited", "foreign", "user-file"]);

export const InitReportSchema = z.object({
  ...envelopeShape(INIT_SCHEMA, INIT_SCHEMA_VERSION),
  plan: PlanSchema,
  /** Every generated file: what writing it does (or did) and its content. */
  files: z.array(z.object({ path: z.string(), status: WriteStatusSchema, content: z.string() })),
  notes: z.array(z.string()),
  dryRun: z.boolean(),
  /** Where replaced files were kept (under .gpuprep/backups/); null when none was replaced. */
  backup: z.string().nullable(),
});

const agree: [Same<z.infer<typeof PlanSchema>, PlanDocument>, Same<z.infer<typeof WriteStatusSchema>, WriteStatus>] =
  [true, true];
void agree;
