/** Findings as doctor, scan and fleet print them: the zod form of findings/types.ts and friends. */
import { z } from "zod";
import type { Finding } from "../../findings/types.js";
import type { FindingSummary } from "../../diagnose/diagnose.js";
import type { MachineSummary } from "../machine-summary.js";
import type { Same } from "../../util/same-type.js";

const SeveritySchema = z.enum(["error", "warning", "info"]);

export const FindingSchema = z.object({
  ruleId: z.string(),
  severity: SeveritySchema,
  title: z.string(),
  message: z.string(),
  evidence: z.array(z.object({ label: z.string(), value: z.string() })),
  fix: z.object({ summary: z.string(), commands: z.array(z.string()) }),
  docs: z.string(),
  cause: z.string().optional(),
  subject: z.string().optional(),
});

export const FindingSummarySchema = z.object({
  errors: z.number().int(),
  warnings: z.number().int(),
  infos: z.number().int(),
});

export const MachineSummarySchema = z.object({
  target: z.string(),
  os: z.string(),
  cpuArch: z.string(),
  gpus: z.array(z.string()),
  driver: z.string(),
  driverCuda: z.string(),
  python: z.string(),
  torch: z.string(),
  numpy: z.string(),
});

const agree: [
  Same<z.infer<typeof FindingSchema>, Finding>,
  Same<z.infer<typeof FindingSummarySchema>, FindingSummary>,
  Same<z.infer<typeof MachineSummarySchema>, MachineSummary>,
] = [true, true, true];
void agree;
