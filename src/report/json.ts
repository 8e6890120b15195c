/** Machine report: `{ findings, facts, summary }`, stable field names for scripts. */
import type { Facts } from "../facts/schema.js";
import type { Finding } from "../rules/types.js";
import { summarize, type FindingSummary } from "../rules/diagnose.js";
import { machineSummary, type MachineSummary } from "./machine-summary.js";

export interface JsonReport {
  findings: Finding[];
  facts: Facts;
  summary: FindingSummary & { machine: MachineSummary; exitCode: number };
}

export function buildJsonReport(facts: Facts, findings: Finding[], exitCode: number): JsonReport {
  return { findings, facts, summary: { ...summarize(findings), machine: machineSummary(facts), exitCode } };
}

export function renderJson(facts: Facts, findings: Finding[], exitCode: number): string {
  return JSON.stringify(buildJsonReport(facts, findings, exitCode), null, 2) + "\n";
}
