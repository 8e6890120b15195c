/**
 * The merge: per-node results -> groups by fingerprint, fleet rules (drift against the reference,
 * node states, the all-reduce), node rules and doctor's rules per node, findings deduplicated
 * across nodes. Pure: a function of the node results, the knowledge base and the options, so a
 * report rebuilt from saved snapshots equals the live one. Work is per distinct environment, not per
 * node, wherever the answer cannot differ between nodes of one environment (volatile.ts).
 */
import type { KnowledgeBase } from "../kb/index.js";
import { diagnose as diagnoseAll } from "../diagnose/diagnose.js";
import type { Facts } from "../facts/schema.js";
import type { Finding, Rule, Severity } from "../findings/types.js";
import { fingerprintOf } from "./fingerprint.js";
import { healthSummary } from "./health.js";
import { compareNodeNames } from "./order.js";
import { packagePolicy, sharedPackageMap, type PackagePolicy } from "./packages.js";
import { baselineReference, majorityReference, type Reference } from "./reference.js";
import type { Baseline } from "./baseline.js";
import type { AllreduceOutcome } from "./allreduce.js";
import type { FleetView, OkNode } from "./rule-kit.js";
import { FLEET_NODE_RULES, FLEET_WIDE_RULES } from "./rules/registry.js";
import { dedupeFindings, sortFindings } from "./dedupe.js";
import { stableKey } from "./volatile.js";
import {
  type Fingerprint,
  type FleetNodeSummary,
  type FleetReport,
  type MergedFinding,
  type NodeGroup,
  type NodeResult,
} from "./types.js";

export { compareNodeNames, dedupeFindings };

function groupId(index: number): string {
  let id = "";
  let n = index;
  do {
    id = String.fromCharCode(65 + (n % 26)) + id;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return id;
}

/** One JSON key per shared fingerprint object (most nodes share one), plus the node's own health. */
const keyCache = new WeakMap<Fingerprint, string>();
function groupKey(fingerprint: Fingerprint, shared: Fingerprint): string {
  let key = keyCache.get(shared);
  if (key === undefined) {
    key = JSON.stringify({ ...shared, gpuHealth: null });
    keyCache.set(shared, key);
  }
  return `${key}\u0000${fingerprint.gpuHealth}`;
}

export function groupNodes(
  nodes: ReadonlyArray<Pick<OkNode, "node" | "fingerprint"> & { shared?: Fingerprint }>,
): NodeGroup[] {
  const byKey = new Map<string, NodeGroup>();
  for (const n of nodes) {
    const key = groupKey(n.fingerprint, n.shared ?? n.fingerprint);
    const group = byKey.get(key);
    if (group) group.nodes.push(n.node);
    else byKey.set(key, { id: "", fingerprint: n.fingerprint, nodes: [n.node] });
  }
  const groups = [...byKey.values()];
  for (const g of groups) g.nodes.sort(compareNodeNames);
  groups.sort(
    (a, b) => b.nodes.length - a.nodes.length || compareNodeNames(a.nodes[0] ?? "", b.nodes[0] ?? ""),
  );
  groups.forEach((g, i) => (g.id = groupId(i)));
  return groups;
}

export interface MergeOptions {
  transport: string;
  mode: FleetReport["mode"];
  /** The doctor rules to run per node (fleet scan: the architecture-coverage ones); all by default. */
  rules?: readonly Rule[];
  /** --baseline: what every node is judged against (else the majority). */
  baseline?: Baseline;
  /** --ignore-package and the always-reported list. */
  packages?: PackagePolicy;
  /** fleet validate: each node's validate findings, and why the payload did not run where it did not. */
  validateFindings?: ReadonlyMap<string, Finding[]>;
  validateFailures?: ReadonlyMap<string, string>;
  /** fleet validate --allreduce. */
  allreduce?: AllreduceOutcome;
}

interface Diagnosed {
  fingerprint: Fingerprint;
  findings: Finding[];
  diagnosisError: string | null;
  packages: ReadonlyMap<string, string>;
}

/** Doctor's rules on one environment; a rule that throws is reported on the node, not fatal. */
function diagnoseEnvironment(facts: Facts, kb: KnowledgeBase, rules: readonly Rule[] | undefined): Diagnosed {
  let findings: Finding[] = [];
  let diagnosisError: string | null = null;
  try {
    findings = diagnoseAll(facts, kb, rules);
  } catch (error) {
    diagnosisError = (error as Error).message ?? String(error);
  }
  return { fingerprint: fingerprintOf(facts), findings, diagnosisError, packages: sharedPackageMap(facts) };
}

interface Checked {
  ok: Array<OkNode & { shared: Fingerprint }>;
  perNode: Array<{ node: string; findings: Finding[] }>;
}

function nodeRuleFindings(
  node: NodeResult & { facts: Facts },
  diagnosisError: string | null,
  kb: KnowledgeBase,
  options: MergeOptions,
): Finding[] {
  const input = {
    node: node.node,
    facts: node.facts,
    diagnosisError,
    validateFailure: options.validateFailures?.get(node.node) ?? null,
  };
  return FLEET_NODE_RULES.flatMap((rule) => {
    try {
      return rule.check(input, kb);
    } catch {
      return [];
    }
  });
}

/** Every answered node diagnosed (once per environment), fingerprinted and given its node findings. */
function checkNodes(nodes: readonly NodeResult[], kb: KnowledgeBase, options: MergeOptions): Checked {
  const byEnvironment = new Map<string, Diagnosed>();
  const checked: Checked = { ok: [], perNode: [] };
  for (const n of nodes) {
    if (n.status !== "ok" || !n.facts) continue;
    const key = n.contentKey ?? stableKey(n.facts);
    let known = key === null ? undefined : byEnvironment.get(key);
    if (!known) {
      known = diagnoseEnvironment(n.facts, kb, options.rules);
      if (key !== null) byEnvironment.set(key, known);
    }
    const node = n as NodeResult & { facts: Facts };
    const fingerprint = { ...known.fingerprint, gpuHealth: healthSummary(node.facts) };
    checked.ok.push({
      node: n.node,
      facts: node.facts,
      fingerprint,
      shared: known.fingerprint,
      packages: known.packages,
      ...(n.labels ? { labels: n.labels } : {}),
    });
    const own = [
      ...nodeRuleFindings(node, known.diagnosisError, kb, options),
      ...(options.validateFindings?.get(n.node) ?? []),
    ];
    checked.perNode.push({
      node: n.node,
      findings: own.length ? [...known.findings, ...own] : known.findings,
    });
  }
  return checked;
}

function fleetRuleFindings(view: FleetView, kb: KnowledgeBase): MergedFinding[] {
  return FLEET_WIDE_RULES.flatMap((rule) => {
    try {
      return rule.check(view, kb);
    } catch {
      // A rule that fails on strange values from one node must not end the merge for the rest.
      return [];
    }
  });
}

function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

function nodeSummaries(
  nodes: readonly NodeResult[],
  groups: readonly NodeGroup[],
  checked: Checked,
): FleetNodeSummary[] {
  const groupOf = new Map<string, string>();
  for (const g of groups) for (const node of g.nodes) groupOf.set(node, g.id);
  const findingsOf = new Map(checked.perNode.map((p) => [p.node, p.findings]));
  return nodes.map((n) => {
    const findings = findingsOf.get(n.node) ?? [];
    const counts = countBySeverity(findings);
    return {
      node: n.node,
      status: n.status,
      reason: n.reason,
      group: groupOf.get(n.node) ?? null,
      durationMs: n.durationMs,
      errors: counts.error,
      warnings: counts.warning,
      infos: counts.info,
      ruleIds: [...new Set(findings.map((f) => f.ruleId))],
      ...(n.source ? { source: n.source } : {}),
      ...(n.labels
        ? {
            nvidiaLabels: Object.fromEntries(
              Object.entries(n.labels).filter(([k]) => k.startsWith("nvidia.com/")),
            ),
          }
        : {}),
    };
  });
}

export function mergeFleet(
  results: readonly NodeResult[],
  kb: KnowledgeBase,
  options: MergeOptions,
): FleetReport {
  const nodes = [...results].sort((a, b) => compareNodeNames(a.node, b.node));
  const checked = checkNodes(nodes, kb, options);
  const groups = groupNodes(checked.ok);
  const reference: Reference = options.baseline
    ? baselineReference(options.baseline)
    : majorityReference(groups, checked.ok.length);
  const view: FleetView = {
    all: nodes,
    nodes: checked.ok,
    reference,
    packages: options.packages ?? packagePolicy(),
    ...(options.allreduce ? { allreduce: options.allreduce } : {}),
  };
  const fleetFindings = sortFindings(fleetRuleFindings(view, kb));
  const nodeFindings = dedupeFindings(checked.perNode);
  const counts = countBySeverity([...fleetFindings, ...nodeFindings]);
  return {
    transport: options.transport,
    mode: options.mode,
    reference: reference.summary,
    nodes: nodeSummaries(nodes, groups, checked),
    groups,
    fleetFindings,
    nodeFindings,
    summary: {
      nodes: nodes.length,
      ok: checked.ok.length,
      notOk: nodes.length - checked.ok.length,
      groups: groups.length,
      errors: counts.error,
      warnings: counts.warning,
      infos: counts.info,
      exitCode: counts.error > 0 ? 1 : 0,
    },
  };
}
