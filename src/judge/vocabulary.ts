/**
 * The one vocabulary doctor's rules and validate's checks judge in. Where both judge the same
 * condition (TF32, torch's arch coverage, the SDPA switches), a judgment in this folder decides
 * once and both commands say its verdict, id and message; each command only maps the verdict to
 * its own word, here and nowhere else (docs/DESIGN.md, "One judging vocabulary").
 */
import { docsUrl } from "../docs-url.js";

/** How bad a doctor finding is; only "error" makes doctor exit 1. */
export type Severity = "error" | "warning" | "info";

/**
 * A validate item's status. "info" is also what validate says of a figure it reports without
 * judging it (no peak to hold it against).
 */
export type Status = "pass" | "warn" | "fail" | "skip" | "info";

/**
 * A shared judgment's outcome: a finding's severity when there is something to say, "pass" when
 * the condition was checked and holds, "skip" when it could not be judged here (no GPU, no torch).
 */
export type Verdict = Severity | "pass" | "skip";

/** validate's word for each verdict; a "fail" makes validate exit 1 as an "error" makes doctor. */
const STATUS_OF: Record<Verdict, Status> = {
  error: "fail",
  warning: "warn",
  info: "info",
  pass: "pass",
  skip: "skip",
};

export function statusOf(verdict: Verdict): Status {
  return STATUS_OF[verdict];
}

/** The inverse of STATUS_OF: a validate status read back as a verdict (fleet judges nodes' reports in doctor's words). */
const VERDICT_OF: Record<Status, Verdict> = {
  fail: "error",
  warn: "warning",
  info: "info",
  pass: "pass",
  skip: "skip",
};

export function verdictOfStatus(status: Status): Verdict {
  return VERDICT_OF[status];
}

/** doctor's word for each verdict: a finding's severity, or null (doctor reports no finding). */
export function severityOf(verdict: Verdict): Severity | null {
  return verdict === "pass" || verdict === "skip" ? null : verdict;
}

export interface Fix {
  /** One sentence: what to do. */
  summary: string;
  /** Exact commands or edits, in order; may be empty when the fix is a decision. */
  commands: string[];
}

/** One shared judgment of one subject (a device, a process's settings). */
export interface Judgment {
  /** The doctor rule's id; validate's item carries it as ruleId and links the same page. */
  id: string;
  verdict: Verdict;
  /** What was found, in the environment's terms: a finding's message, a validate item's reason. */
  message: string;
  /** What to do; only where the verdict has something to fix. */
  fix?: Fix;
}

/** The rule's page in the repository: docs/rules/<ID>.md. */
function docsPath(ruleId: string): string {
  return `docs/rules/${ruleId}.md`;
}

/** The rule's page as findings, validate items, SARIF's helpUri and the text reports link it. */
export function ruleDocsUrl(ruleId: string): string {
  return docsUrl(docsPath(ruleId));
}
