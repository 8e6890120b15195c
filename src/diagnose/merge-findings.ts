/**
 * One root cause, one finding (issue 15 item 3; docs/failures.md "Merges"): findings that name the
 * same cause of the same package are merged into the one whose fix is the most specific, keeping
 * the others' evidence. Rules mark what they name with Finding.cause and Finding.subject.
 */
import type { Finding, Severity } from "../findings/types.js";
import { ev } from "../findings/finding.js";

/** For each cause, the rules whose finding leads, most specific fix first. */
const LEADS: Record<string, string[]> = {
  // Extensions: the fatbin scan names the missing sm_XY and builds for exactly this GPU; the import
  // error is evidence. torch: the arch-list verdict names the index to install from; the fatbin
  // listing and the failed kernel launch are evidence. (Groups are per subject: never mixed.)
  "arch-missing": [
    "extension-arch-missing",
    "extension-import-failed",
    "torch-arch-not-covered",
    "torch-binary-arch-missing",
    "torch-kernel-launch-failed",
  ],
  // torch sees no GPU that nvidia-smi lists: a variable that hides them or a rejected allocator
  // setting names the cause and its fix; "torch cannot use the GPU" is then their symptom.
  "cuda-unavailable": ["cuda-visible-devices-hides-gpus", "alloc-conf-invalid", "torch-cuda-unavailable"],
};

const RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

function rankOf(finding: Finding): number {
  const order = LEADS[finding.cause ?? ""] ?? [];
  const index = order.indexOf(finding.ruleId);
  return index === -1 ? order.length : index;
}

function leaderOf(group: Finding[]): Finding {
  return [...group].sort((a, b) => rankOf(a) - rankOf(b))[0]!;
}

function merge(lead: Finding, group: Finding[]): Finding {
  const others = group.filter((f) => f !== lead);
  const seen = new Set(lead.evidence.map((e) => `${e.label}\0${e.value}`));
  const evidence = [...lead.evidence];
  for (const other of others) {
    evidence.push(ev(`also found by ${other.ruleId}`, other.message));
    for (const e of other.evidence)
      if (!seen.has(`${e.label}\0${e.value}`)) {
        seen.add(`${e.label}\0${e.value}`);
        evidence.push(e);
      }
  }
  const severity = group.map((f) => f.severity).sort((a, b) => RANK[a] - RANK[b])[0]!;
  return { ...lead, severity, evidence };
}

/** The findings with each (subject, cause) group merged into one, at the place of its leader. */
export function mergeSameCause(findings: Finding[]): Finding[] {
  const groups = new Map<string, Finding[]>();
  for (const f of findings)
    if (f.cause !== undefined && f.subject !== undefined) {
      const key = `${f.subject}\0${f.cause}`;
      groups.set(key, [...(groups.get(key) ?? []), f]);
    }
  const replaced = new Map<Finding, Finding | null>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const lead = leaderOf(group);
    for (const f of group) replaced.set(f, f === lead ? merge(lead, group) : null);
  }
  return findings.flatMap((f) => {
    const to = replaced.get(f);
    return to === undefined ? [f] : to === null ? [] : [to];
  });
}
