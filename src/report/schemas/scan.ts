/** `gpuprep scan --json`: the CUDA code in each binary and whether it runs on this GPU. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { SCAN_SCHEMA, SCAN_SCHEMA_VERSION } from "../document-ids.js";
import { BinaryCoverageSchema } from "../../facts/schema.js";
import type { CoverageVerdict } from "../../kb/compat.js";
import type { Same } from "../../util/same-type.js";

export const CoverageVerdictSchema = z.object({
  /** sass: a cubin runs natively; ptx-jit: only through the driver's JIT; none: no code can run. */
  how: z.enum(["sass", "ptx-jit", "none"]),
  via: z.array(z.string()),
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
    }),
  ),
});

const agree: [Same<z.infer<typeof CoverageVerdictSchema>, CoverageVerdict>] = [true];
void agree;
