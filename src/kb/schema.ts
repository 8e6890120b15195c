/**
 * Runtime schemas of the knowledge-base tables. Every JSON table is checked against these when it
 * is loaded, so a malformed row (or an overlay written by an older gpuprep) fails loudly instead
 * of producing wrong answers. Types stay in types.ts; the `satisfies`-style checks below keep the
 * two in step at compile time.
 */
import { z } from "zod";
import type * as Row from "./types.js";

const version = z.string().regex(/^\d+(\.\d+)*$/, "a dotted numeric version");
const computeCapability = z.string().regex(/^\d{1,2}\.\d$/, "a compute capability like 9.0");
const sassTarget = z.string().regex(/^\d{2,3}$/, "an sm number like 90");
const archListEntry = z.string().regex(/^(sm|compute)_\d{2,3}[af]?$/, "sm_XY or compute_XY");

/** A documentation URL, or a file of this repository (docs/measurements/...). */
export const sourceSchema = z.object({
  url: z
    .string()
    .refine(
      (url) => /^https?:\/\/\S+$/.test(url) || /^docs\/[\w./-]+\.md$/.test(url),
      "a http(s) URL or a docs/*.md file of this repository",
    ),
  note: z.string().min(1).optional(),
});

const sources = z.array(sourceSchema).min(1, "every row needs at least one source");

const cudaToolkitFact = z.enum(["minDriverLinux", "minorCompatMinDriverLinux", "sassTargets", "ptxIsa"]);

/** A toolkit row's source names the facts it states, so a decision cites only those behind it. */
const cudaToolkitSourceSchema = sourceSchema.extend({
  backs: z.array(cudaToolkitFact).min(1, "name the facts of the row this source states"),
});
const confidence = z.enum(["primary", "measured", "secondary", "index"]);

export const archRowSchema = z.object({
  computeCapability,
  architecture: z.string().min(1),
  examples: z.array(z.string()),
  tegra: z.boolean(),
  driverFloor: z
    .object({
      minDriverLinux: version,
      firstCuda: z.string().regex(/^\d+\.\d+$/),
      lastDriverBranch: z.string().regex(/^\d+$/).nullable(),
      derived: z.literal(true),
      note: z.string().min(1),
      source: z.string().min(1),
    })
    .optional(),
  confidence,
  sources,
});

export const cudaToolkitRowSchema = z.object({
  version: z.string().regex(/^\d+\.\d+$/),
  minDriverLinux: version,
  minorCompatMinDriverLinux: version.nullable(),
  sassTargets: z.array(sassTarget).optional(),
  ptxIsa: z
    .string()
    .regex(/^\d+\.\d+$/)
    .optional(),
  confidence,
  sources: z.array(cudaToolkitSourceSchema).min(1, "every row needs at least one source"),
});

const tflops = z.number().positive().nullable();

/** One precision's peak, dense and with 2:4 structured sparsity; or not on the architecture at all. */
const precisionPeak = z.union([z.object({ dense: tflops, sparse: tflops }), z.literal("not-on-arch")]);

export const PEAK_FORMATS = [
  "fp64",
  "fp32",
  "tf32",
  "bf16",
  "fp16",
  "fp8",
  "mxfp8",
  "fp6",
  "fp4",
  "nvfp4",
  "int8",
] as const;

const peaks = z.object(
  Object.fromEntries(PEAK_FORMATS.map((format) => [format, precisionPeak.optional()])) as Record<
    (typeof PEAK_FORMATS)[number],
    z.ZodOptional<typeof precisionPeak>
  >,
);

export const gpuRowSchema = z.object({
  name: z.string().min(1),
  aliases: z.array(z.string().min(1)),
  computeCapability,
  architecture: z.string().min(1),
  memoryGB: z.number().positive().nullable(),
  nvidiaSmiMemoryMiB: z.number().int().positive().nullable().optional(),
  memoryType: z.string().nullable(),
  memoryBandwidthGBs: z.number().positive().nullable(),
  peakTflops: z.object({ bf16: tflops, fp16: tflops, tf32: tflops, fp32: tflops }),
  peaks: peaks.optional(),
  hostCpuArch: z.enum(["x86_64", "aarch64"]).nullable(),
  unifiedMemory: z.boolean(),
  minDriverLinux: version.nullable().optional(),
  minDriverBasis: z.enum(["stated", "shipped"]).optional(),
  tegra: z.boolean().optional(),
  variants: z.array(z.string().min(1)).min(2).optional(),
  sources,
});

export const torchBuildRowSchema = z.object({
  torch: z.string().regex(/^\d+\.\d+$/, "a release series like 2.11"),
  variant: z.string().regex(/^(cu\d{3}|cpu)$/),
  platform: z.enum(["linux-x86_64", "linux-aarch64"]),
  cuda: z
    .string()
    .regex(/^\d+\.\d+$/)
    .nullable(),
  archList: z.array(archListEntry),
  pythons: z.array(z.string().regex(/^3\.\d+t?$/)).min(1),
  numpyBuildMajor: z.number().int().min(1).max(3).nullable(),
  indexUrl: z.string().url(),
  pypiDefault: z.boolean(),
  ptxUnverified: z.boolean().optional(),
  confidence,
  sources,
});

export const condaTorchBuildRowSchema = z.object({
  channel: z.enum(["conda-forge", "pytorch"]),
  torch: z.string().regex(/^\d+\.\d+$/, "a release series like 2.5"),
  versions: z.array(z.string().regex(/^\d+\.\d+\.\d+$/, "a release like 2.5.1")),
  cuda: z
    .string()
    .regex(/^\d+\.\d+$/)
    .nullable(),
  platform: z.enum(["linux-x86_64", "linux-aarch64"]),
  archList: z.array(archListEntry),
  ptxUnverified: z.boolean().optional(),
  superseded: z.boolean().optional(),
  confidence,
  sources,
});

const ngcCpuArch = z.enum(["x86_64", "aarch64"]);

const ngcGpuRunSchema = z.object({
  computeCapability,
  gpu: z.string().min(1),
  cpuArch: ngcCpuArch.nullable(),
  cpuArchBasis: z.enum(["stated", "machine", "assumed"]).nullable(),
  result: z.enum(["ran", "detected", "warned", "failed"]),
  quote: z.string().min(1),
  what: z.string().min(1),
  source: z.string().min(1),
});

const ngcArchListSchema = z.object({
  platform: z.enum(["amd64", "arm64"]),
  archList: z.array(archListEntry).min(1),
  written: z.string().min(1).nullable(),
  basis: z.enum(["image-env", "get-arch-list", "derived"]),
  platformBasis: z.enum(["stated", "machine", "assumed"]),
  note: z.string().min(1),
  source: z.string().min(1),
});

const ngcJetsonImageSchema = z.object({
  jetpack: z.string().regex(/^\d+\.\d+$/),
  computeCapabilities: z.array(computeCapability).min(1),
  note: z.string().min(1),
  source: z.string().min(1),
});

export const ngcImageRowSchema = z.object({
  tag: z.string().regex(/^\d{2}\.\d{2}$/),
  image: z.string().regex(/^nvcr\.io\/nvidia\/pytorch:\d{2}\.\d{2}-py3$/),
  torch: z
    .string()
    .regex(
      /^\d+\.\d+\.\d+(a0)?\+[0-9a-f]{7,12}(\.nv\d{2}\.\d{2}(\.\d+)?)?$/,
      "a torch version like 2.9.0a0+145a3a7bda.nv25.10",
    ),
  torchAsPrinted: z.boolean(),
  /** The tag's image-index digest, where a source names it (init pins FROM by it). */
  digest: z
    .object({ value: z.string().regex(/^sha256:[0-9a-f]{64}$/), source: z.string().min(1) })
    .nullable()
    .optional(),
  cuda: version,
  minDriverLinux: version.nullable(),
  driverFloorBasis: z.enum(["release-notes", "cuda-ga-driver", "cuda-minor-version-compat"]).nullable(),
  ubuntu: z.string().nullable(),
  python: z.string().nullable(),
  numpy: z.string().nullable(),
  platforms: z.object({
    amd64: z.boolean().nullable(),
    arm64: z.boolean().nullable(),
    igpu: z.boolean().nullable(),
  }),
  archLists: z.array(ngcArchListSchema),
  jetson: ngcJetsonImageSchema.nullable(),
  gpus: z.object({
    minComputeCapability: computeCapability.nullable(),
    exceptions: z.array(z.object({ computeCapability, note: z.string().min(1), source: z.string().min(1) })),
    runs: z.array(ngcGpuRunSchema),
  }),
  packages: z.record(z.string(), z.string()),
  pipConstraintFile: z.string().nullable(),
  confidence,
  sources,
});

const extensionPlatform = z.enum(["linux-x86_64", "linux-aarch64", "windows-x86_64"]);

const extensionBuildSchema = z.object({
  version: z.string().min(1),
  cuda: z
    .string()
    .regex(/^\d+\.\d+$/)
    .nullable(),
  torch: z.string().min(1).nullable(),
  platforms: z.array(extensionPlatform).min(1),
  targets: z.array(archListEntry),
  source: z.string().url(),
});

const extensionBuildEnvSchema = z.object({
  archVariable: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
  archSeparator: z.string().min(1),
  archValues: z.array(sassTarget).min(1),
  force: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string()),
  source: z.string().url(),
});

const extensionInstallHazardSchema = z.object({
  platform: extensionPlatform,
  problem: z.string().min(1),
  source: z.string().url(),
});

export const extensionRowSchema = z.object({
  name: z.string().min(1),
  summary: z.string().min(1),
  supportedComputeCapabilities: z.array(computeCapability),
  distribution: z.array(z.string().min(1)),
  platforms: z.array(extensionPlatform),
  torchPins: z.string().nullable(),
  buildFromSourceFor: z.array(computeCapability),
  notes: z.array(z.string()),
  builds: z.array(extensionBuildSchema).optional(),
  buildEnv: extensionBuildEnvSchema.optional(),
  installHazards: z.array(extensionInstallHazardSchema).optional(),
  confidence,
  sources,
});

export const wheelPythonsRowSchema = z.object({
  package: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "a normalized PyPI name"),
  releases: z
    .array(z.string().regex(/^\d+(\.\d+)+(\.post\d+)?$/, "a release like 1.26.4 or 0.0.33.post2"))
    .min(1),
  platforms: z.array(z.enum(["linux-x86_64", "linux-aarch64"])).min(1),
  pythons: z.array(z.string().regex(/^3\.\d+t?$/)),
  anyPythonFrom: z
    .string()
    .regex(/^3\.\d+$/)
    .optional(),
  confidence,
  sources,
});

export const systemRowSchema = z.object({
  name: z.string().min(1),
  aliases: z.array(z.string().min(1)),
  gpu: z.string().min(1),
  software: z.string().min(1),
  driver: version.nullable(),
  cuda: z
    .string()
    .regex(/^\d+\.\d+$/)
    .nullable(),
  confidence,
  sources,
});

export const packageRequirementsRowSchema = z.object({
  package: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "a normalized PyPI name"),
  versions: z.string().min(1),
  requiresPython: z.string().nullable(),
  torch: z.string().min(1).nullable(),
  note: z.string(),
  confidence,
  sources,
});

/** One table file: { table, rows }. */
export function tableSchema<Row extends z.ZodType>(name: string, row: Row) {
  return z.object({ table: z.literal(name), rows: z.array(row) });
}

export const importCheckRowSchema = z.object({
  module: z.string().regex(/^[A-Za-z_]\w*$/, "a top-level module name"),
  distributions: z.array(z.string().regex(/^[A-Za-z0-9][\w.-]*$/, "a distribution name")).min(1),
  doctor: z.boolean(),
  why: z.string().min(1),
  sources,
});

// Compile-time agreement between the schemas and the hand-written row types.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree: [
  Same<z.infer<typeof archRowSchema>, Row.ArchRow>,
  Same<z.infer<typeof cudaToolkitRowSchema>, Row.CudaToolkitRow>,
  Same<z.infer<typeof gpuRowSchema>, Row.GpuRow>,
  Same<z.infer<typeof torchBuildRowSchema>, Row.TorchBuildRow>,
  Same<z.infer<typeof ngcImageRowSchema>, Row.NgcImageRow>,
  Same<z.infer<typeof extensionRowSchema>, Row.ExtensionRow>,
  Same<z.infer<typeof condaTorchBuildRowSchema>, Row.CondaTorchBuildRow>,
  Same<z.infer<typeof wheelPythonsRowSchema>, Row.WheelPythonsRow>,
  Same<z.infer<typeof systemRowSchema>, Row.SystemRow>,
  Same<z.infer<typeof importCheckRowSchema>, Row.ImportCheckRow>,
  Same<z.infer<typeof packageRequirementsRowSchema>, Row.PackageRequirementsRow>,
] = [true, true, true, true, true, true, true, true, true, true, true];
void agree;
