/** Runs every registered rule over one Facts snapshot: the pure core of `gpuprep doctor`. */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Finding, Rule, Severity } from "../findings/types.js";
import { RULES } from "../rules/registry.js";
import { mergeSameCause } from "./merge-findings.js";

const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Findings of all rules, one per root cause (merge-findings.ts), errors first, then in registry order. */
export function diagnose(facts: Facts, kb: KnowledgeBase, rules: readonly Rule[] = RULES): Finding[] {
  const findings = mergeSameCause(rules.flatMap((rule) => rule.check(facts, kb)));
  return findings
    .map((finding, index) => ({ finding, index }))
    .sort((a, b) => ORDER[a.finding.severity] - ORDER[b.finding.severity] || a.index - b.index)
    .map(({ finding }) => finding);
}

export interface FindingSummary {
  errors: number;
  warnings: number;
  infos: number;
}

export function summarize(findings: Finding[]): FindingSummary {
  return {
    errors: findings.filter((f) => f.severity === "error").length,
    warnings: findings.filter((f) => f.severity === "warning").length,
    infos: findings.filter((f) => f.severity === "info").length,
  };
}
