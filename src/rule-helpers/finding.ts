/** Builds a Finding from a rule's constants plus what this check found. */
import { ruleDocsUrl, type Evidence, type Finding, type Fix, type Rule, type Severity } from "./types.js";

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
  return { label, value: value === null || value === undefined ? "(none)" : String(value) };
}
