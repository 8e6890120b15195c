/** Builds a Finding from a rule's constants plus what this check found. */
import { ruleDocsUrl, type Evidence, type Finding, type Fix, type Rule, type Severity } from "./types.js";
import { severityOf, type Judgment } from "../judge/vocabulary.js";

export interface FindingParts {
  message: string;
  evidence: Evidence[];
  fix: Fix;
  /** Only when this finding differs from the rule's usual severity. */
  severity?: Severity;
  cause?: string;
  subject?: string;
}

export function makeFinding(rule: Pick<Rule, "id" | "title" | "severity">, parts: FindingParts): Finding {
  return {
    ruleId: rule.id,
    severity: parts.severity ?? rule.severity,
    title: rule.title,
    message: parts.message,
    evidence: parts.evidence,
    fix: parts.fix,
    docs: ruleDocsUrl(rule.id),
    // Absent rather than undefined, so findings without them compare and serialise as before.
    ...(parts.cause !== undefined ? { cause: parts.cause } : {}),
    ...(parts.subject !== undefined ? { subject: parts.subject } : {}),
  };
}

export function ev(label: string, value: unknown): Evidence {
  return { label, value: evidenceText(value) };
}

/** A value as evidence shows it: a list joined by commas, an object as JSON, never "[object Object]". */
function evidenceText(value: unknown): string {
  if (value === null || value === undefined) return "(none)";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  if (Array.isArray(value)) return value.map(evidenceText).join(",");
  return JSON.stringify(value) ?? typeof value;
}

/**
 * The finding a shared judgment (src/judge/) makes in doctor: none for "pass" or "skip", else one
 * with the judgment's severity, message and fix, and the rule's own evidence (and fix, where the
 * rule knows more about the environment than the judgment does).
 */
export function findingsOf(
  rule: Pick<Rule, "id" | "title" | "severity">,
  judgment: Judgment,
  parts: Omit<FindingParts, "message" | "severity" | "fix"> & { fix?: Fix },
): Finding[] {
  const severity = severityOf(judgment.verdict);
  if (severity === null) return [];
  // Every judgment with a finding carries a fix or its rule gives one; the page is the last resort.
  const fix = parts.fix ?? judgment.fix ?? { summary: `See ${ruleDocsUrl(rule.id)}.`, commands: [] };
  return [makeFinding(rule, { ...parts, message: judgment.message, severity, fix })];
}
