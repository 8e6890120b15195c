/**
 * Per-node findings merged across nodes: the same rule, severity, message and fix on many nodes is
 * one finding with their list. A measured duration in a message ("did not finish within 46 s") is
 * not part of what makes two findings the same: 128 nodes whose torch import hit the limit are one
 * finding, its message giving the range measured ("within 45–47 s"), not three.
 */
import type { Finding, Severity } from "../findings/types.js";
import { compareNodeNames } from "./order.js";
import type { MergedFinding } from "./types.js";

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** A number followed by a time unit: what one node measured, not what it is. */
const DURATION = /(\d+(?:\.\d+)?)( ?)(ms|s)\b/g;

function maskDurations(text: string): string {
  return text.replace(DURATION, "#$2$3");
}

/** Findings are shared by the nodes of one environment: one key per finding object. */
const keys = new WeakMap<Finding, string>();
function keyOf(f: Finding): string {
  let key = keys.get(f);
  if (key === undefined) {
    key = `${f.ruleId}\u0000${f.severity}\u0000${maskDurations(f.message)}\u0000${maskDurations(f.fix.summary)}`;
    keys.set(f, key);
  }
  return key;
}

/** The messages' durations, slot by slot: one value where all agree, else "min–max". */
function mergedMessage(messages: ReadonlySet<string>): string {
  const [first = ""] = messages;
  if (messages.size === 1) return first;
  const slots: number[][] = [];
  for (const message of messages) {
    let i = 0;
    for (const match of message.matchAll(DURATION)) (slots[i++] ??= []).push(Number(match[1]));
  }
  let i = 0;
  return first.replace(DURATION, (_whole, _n: string, space: string, unit: string) => {
    const values = slots[i++] ?? [];
    const low = Math.min(...values);
    const high = Math.max(...values);
    return `${low === high ? low : `${low}–${high}`}${space}${unit}`;
  });
}

export function sortFindings(findings: MergedFinding[]): MergedFinding[] {
  for (const f of findings) f.nodes.sort(compareNodeNames);
  return findings.sort(
    (a, b) =>
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
      b.nodes.length - a.nodes.length ||
      a.ruleId.localeCompare(b.ruleId),
  );
}

export function dedupeFindings(
  perNode: ReadonlyArray<{ node: string; findings: readonly Finding[] }>,
): MergedFinding[] {
  const merged = new Map<string, { finding: Finding; nodes: string[]; messages: Set<string> }>();
  for (const { node, findings } of perNode) {
    for (const f of findings) {
      const key = keyOf(f);
      const entry = merged.get(key);
      if (entry) {
        if (entry.nodes.at(-1) !== node) entry.nodes.push(node);
        entry.messages.add(f.message);
      } else merged.set(key, { finding: f, nodes: [node], messages: new Set([f.message]) });
    }
  }
  return sortFindings(
    [...merged.values()].map(({ finding, nodes, messages }) => ({
      ...finding,
      message: mergedMessage(messages),
      nodes,
    })),
  );
}
