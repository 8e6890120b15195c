/** `gpuprep scan --json`: the CUDA code in each binary and whether it runs on this GPU. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { SCAN_SCHEMA, SCAN_SCHEMA_VERSION } from "../document-ids.js";
import { BinaryCoverageSchema } from "../../facts/schema.js";
import type { CoverageVerdict } from "../../kb/compat.js";
import type { Same } from "../../util/same-type.js";
import type { PackageReport, SourceReport } from "../../remote/scan-result.js";

const CoverageVerdictSchema = z.object({
  /** sass: a cubin runs natively; ptx-jit: only through the driver's JIT; none: no code can run. */
  how: z.enum(["sass", "ptx-jit", "none"]),
  via: z.array(z.string()),
});

const howSchema = z.enum(["sass", "ptx-jit", "none"]);

/** A wheel scanned (a path, a URL, an index's pick, a lock's), or a lock entry that was not. */
const ScanPackageSchema = z.object({
  name: z.string(),
  version: z.string().nullable(),
  filename: z.string().nullable(),
  /** A path or URL. */
  location: z.string().nullable(),
  sizeBytes: z.number().int().nullable(),
  /** Body bytes fetched over the network for it (0 on disk). */
  bytesFetched: z.number().int(),
  /** file: on disk; ranges: HTTP Range requests; stream: the whole file once. */
  transfer: z.enum(["file", "ranges", "stream"]).nullable(),
  librariesWithCuda: z.number().int(),
  /** The worst verdict over its libraries with CUDA code. */
  verdict: howSchema.nullable(),
  /** PEP 825 variant: the label, its properties, whether a variant-aware installer accepts it for the target. */
  variant: z
    .object({
      label: z.string(),
      properties: z.record(z.string(), z.record(z.string(), z.array(z.string()))),
      compatible: z.boolean().nullable(),
      assumption: z.string().nullable(),
    })
    .nullable(),
  /** Why it was not scanned: pure Python, no wheel for the platform, a marker, offline. */
  skipped: z.string().nullable(),
  error: z.string().nullable(),
  note: z.string().optional(),
});

const ScanSourceSchema = z.object({
  ref: z.string(),
  kind: z.enum(["wheel", "lock", "index", "image"]),
  transfer: z.enum(["file", "ranges", "stream", "registry"]).nullable(),
  /** The wheel's size, or the image's layers as stored. */
  sizeBytes: z.number().int().nullable(),
  bytesFetched: z.number().int(),
  layers: z.number().int().optional(),
  /** Image libraries a later layer removed (whiteouts). */
  removed: z.array(z.string()).optional(),
});

export const ScanReportSchema = z.object({
  ...envelopeShape(SCAN_SCHEMA, SCAN_SCHEMA_VERSION),
  /** The GPU the verdicts are for; null when none is visible (then every verdict is null). */
  device: z.object({ label: z.string(), computeCapability: z.string() }).nullable(),
  filesExamined: z.number().int(),
  libraries: z.array(
    BinaryCoverageSchema.extend({
      lto: z.array(z.string()),
      verdict: CoverageVerdictSchema.nullable(),
      /** The wheel (file name) or image (reference) it was read from; absent for a file on disk. */
      package: z.string().optional(),
      /** In an image, the layer it comes from (0 = the base). */
      layer: z.number().int().optional(),
    }),
  ),
  /** Present when wheels, a lock, an index or an image were read: the platform wheels were picked for. */
  target: z
    .object({
      arch: z.enum(["x86_64", "aarch64"]),
      python: z.string(),
      glibc: z.string(),
      driverCuda: z.string().nullable(),
    })
    .optional(),
  packages: z.array(ScanPackageSchema).optional(),
  sources: z.array(ScanSourceSchema).optional(),
  /** A wheel variant's label that its binaries contradict, an image entry that leaves the root. */
  findings: z
    .array(z.object({ severity: z.enum(["error", "warning"]), package: z.string(), message: z.string() }))
    .optional(),
});

const agree: [
  Same<z.infer<typeof CoverageVerdictSchema>, CoverageVerdict>,
  Same<z.infer<typeof ScanPackageSchema>, PackageReport>,
  Same<z.infer<typeof ScanSourceSchema>, SourceReport>,
] = [true, true, true];
void agree;
