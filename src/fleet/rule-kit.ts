/**
 * What fleet rules are and share: the two rule shapes (a fleet rule reads every node at once, a
 * node rule one node's facts beside doctor's rules), the view of the fleet they read, and the
 * helpers that turn "this field differs" into a finding naming the values and their nodes.
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { makeFinding } from "../findings/finding.js";
import type { Evidence, Finding, Severity } from "../findings/types.js";
import { FINGERPRINT_LABELS } from "./fingerprint.js";
import { nodeListText } from "./hostlist.js";
import type { Reference } from "./reference.js";
import type { PackagePolicy } from "./packages.js";
import type { Fingerprint, FingerprintField, MergedFinding, NodeResult } from "./types.js";
import type { AllreduceOutcome } from "./allreduce.js";

export { nodeListText };

/** A node whose probe answered, with what the merge worked out about it once. */
export interface OkNode {
  node: string;
  facts: Facts;
  fingerprint: Fingerprint;
  /** Kubernetes node labels, when the node came from --kube. */
  labels?: Record<string, string>;
  /** normalized distribution name -> version (shared between nodes of one environment). */
  packages: ReadonlyMap<string, string>;
}

/** Everything a fleet rule may read. */
export interface FleetView {
  /** Every node, checked or not, in name order. */
  all: readonly NodeResult[];
  /** The nodes that answered. */
  nodes: readonly OkNode[];
  /** What the nodes are judged against: a --baseline, or the majority. */
  reference: Reference;
  packages: PackagePolicy;
  /** fleet validate --allreduce: the multi-node all-reduce, when it was asked for. */
  allreduce?: AllreduceOutcome;
}

/** One node's inputs for node rules: its facts and what the fleet run learnt beside them. */
interface FleetNodeInput {
  node: string;
  facts: Facts;
  /** doctor's rules threw on this node's facts (a gpuprep bug): the message. */
  diagnosisError: string | null;
  /** fleet validate: the payload's failure on this node, when it did not run. */
  validateFailure: string | null;
}

interface RuleHead {
  /** Stable, kebab-case, starting with "fleet-". */
  id: string;
  title: string;
  severity: Severity;
}

export interface FleetWideRule extends RuleHead {
  scope: "fleet";
  check(view: FleetView, kb: KnowledgeBase): MergedFinding[];
}

export interface FleetNodeRule extends RuleHead {
  scope: "node";
  check(input: FleetNodeInput, kb: KnowledgeBase): Finding[];
}

export type FleetRule = FleetWideRule | FleetNodeRule;

/** "3 of 16 nodes". */
export function ofTotal(part: number, total: number): string {
  return `${part} of ${total} node${total === 1 ? "" : "s"}`;
}

/** value -> nodes, most common value first (ties: by value). */
export function spread(nodes: readonly OkNode[], field: FingerprintField): Array<[string, string[]]> {
  return spreadBy(nodes, (n) => n.fingerprint[field]);
}

export function spreadBy(
  nodes: readonly OkNode[],
  valueOf: (node: OkNode) => string,
): Array<[string, string[]]> {
  const map = new Map<string, string[]>();
  for (const n of nodes) {
    const value = valueOf(n);
    const list = map.get(value);
    if (list) list.push(n.node);
    else map.set(value, [n.node]);
  }
  return [...map].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
}

export function shortValue(value: string, max = 120): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/**
 * How a value differs from the reference, item by item for list-like fields ("torch: sm_80 sm_90;
 * xformers: sm_80" -> "+xformers: sm_80"), so a long fingerprint field reads as its change.
 */
export function describeDifference(reference: string, value: string, max = 240): string {
  for (const separator of ["; ", ", "]) {
    if (!reference.includes(separator) && !value.includes(separator)) continue;
    const mine = new Set(value.split(separator));
    const theirs = new Set(reference.split(separator));
    const added = [...mine].filter((x) => !theirs.has(x)).map((x) => `+${x}`);
    const removed = [...theirs].filter((x) => !mine.has(x)).map((x) => `-${x}`);
    return shortValue([...added, ...removed].join(separator), max);
  }
  return shortValue(value, max);
}

/** One evidence row per value: the reference's value as it is, the others as their change. */
export function spreadEvidence(
  field: FingerprintField,
  values: Array<[string, string[]]>,
  reference: string,
): Evidence[] {
  return values.map(([value, nodes]) => ({
    label: `${FINGERPRINT_LABELS[field]} ${value === reference ? shortValue(value) : describeDifference(reference, value, 160)}`,
    value: `${nodes.length} node${nodes.length === 1 ? "" : "s"}: ${nodeListText(nodes, 12)}`,
  }));
}

/** A fleet finding: the rule's constants, what was found, the nodes it names. */
export function fleetFinding(
  rule: RuleHead,
  parts: {
    message: string;
    evidence: Evidence[];
    fix: string;
    commands?: string[];
    nodes: string[];
    severity?: Severity;
  },
): MergedFinding {
  const { fix, commands, nodes, ...rest } = parts;
  return { ...makeFinding(rule, { ...rest, fix: { summary: fix, commands: commands ?? [] } }), nodes };
}

/** The KB answers from versions a node reported; a malformed version must not end the merge. */
export function safe<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

export function dedupeEvidence(evidence: Evidence[]): Evidence[] {
  const seen = new Set<string>();
  return evidence.filter((e) => {
    const key = `${e.label}\u0000${e.value}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
