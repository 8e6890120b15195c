/** What a diagnostic rule is and what it returns. */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Fix, Severity } from "../judge/vocabulary.js";

// One vocabulary with validate's checks (src/judge/vocabulary.ts); re-exported where rules import them.
export type { Fix, Severity } from "../judge/vocabulary.js";
export { ruleDocsUrl } from "../judge/vocabulary.js";

export interface Evidence {
  /** What the fact is ("torch.cuda.get_arch_list()", "nvidia-smi driver"). */
  label: string;
  value: string;
}

export interface Finding {
  ruleId: string;
  severity: Severity;
  title: string;
  /** What is wrong here, in this environment's terms. */
  message: string;
  evidence: Evidence[];
  fix: Fix;
  /** The rule's page, absolute and versioned (ruleDocsUrl): it must work after a global install. */
  docs: string;
  /** A stable id of the cause it names ("arch-missing", "undefined-symbol"): what tests and merges read, not the prose. */
  cause?: string;
  /**
   * The one package the cause is about, PEP 503-normalised ("flash-attn"): findings of one subject
   * and one cause are one finding (merge-findings.ts).
   */
  subject?: string;
}

export interface Rule {
  /** Stable, kebab-case; never reused for another meaning. */
  id: string;
  title: string;
  /** The severity of the findings it normally returns (a finding may differ and says so). */
  severity: Severity;
  check(facts: Facts, kb: KnowledgeBase): Finding[];
}
