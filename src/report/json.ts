/** Machine report: `{ findings, facts, summary }`, stable field names for scripts. */
import type { Facts } from "../facts/schema.js";
import type { Finding } from "../findings/types.js";
import { summarize, type FindingSummary } from "../diagnose/diagnose.js";
import { machineSummary, type MachineSummary } from "./machine-summary.js";
import { envelope, renderJson as renderJsonText, type Envelope } from "./envelope.js";

export const DOCTOR_REPORT_SCHEMA = "gpuprep.doctor";
/** 2: the facts inside are version 2 (the SDPA switch `memEfficient` became `efficient`). */
export const DOCTOR_REPORT_VERSION = 2;

export interface JsonReport extends Envelope {
  findings: Finding[];
  facts: Facts;
  summary: FindingSummary & { machine: MachineSummary; exitCode: number };
}

export function buildJsonReport(facts: Facts, findings: Finding[], exitCode: number): JsonReport {
  return {
    ...envelope(DOCTOR_REPORT_SCHEMA, DOCTOR_REPORT_VERSION),
    findings,
    facts,
    summary: { ...summarize(findings), machine: machineSummary(facts), exitCode },
  };
}

export function renderJson(facts: Facts, findings: Finding[], exitCode: number): string {
  return renderJsonText(buildJsonReport(facts, findings, exitCode));
}
