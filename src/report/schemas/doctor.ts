/** `gpuprep doctor --json` and the Facts snapshot (`doctor --save`). */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { FactsSchema } from "../../facts/schema.js";
import { DOCTOR_REPORT_SCHEMA, DOCTOR_REPORT_VERSION, type JsonReport } from "../json.js";
import { FindingSchema, FindingSummarySchema, MachineSummarySchema } from "./findings.js";
import type { Same } from "../../util/same-type.js";

export const DoctorReportSchema = z.object({
  ...envelopeShape(DOCTOR_REPORT_SCHEMA, DOCTOR_REPORT_VERSION),
  findings: z.array(FindingSchema),
  facts: FactsSchema,
  summary: FindingSummarySchema.extend({ machine: MachineSummarySchema, exitCode: z.number().int() }),
});

// JsonReport's envelope fields are wider (string, number) than the literals here.
const agree: [
  Same<
    Omit<z.infer<typeof DoctorReportSchema>, "schema" | "schemaVersion">,
    Omit<JsonReport, "schema" | "schemaVersion">
  >,
] = [true];
void agree;
