/**
 * The merge: per-node results -> groups by fingerprint, drift findings, node-state findings and
 * per-node doctor findings deduplicated across nodes. Pure: a function of the node results and
 * the knowledge base, so a report rebuilt from saved snapshots equals the live one.
 */
import type { KnowledgeBase } from "../kb/index.js";
import { diagnose as diagnoseAll } from "../diagnose/diagnose.js";
import type { Facts } from "../facts/schema.js";
import type { Finding, Rule, Severity } from "../rule-helpers/types.js";
import { fingerprintKey, fingerprintOf } from "./fingerprint.js";
import { factsContentKey } from "../facts/content-key.js";
import { DRIFT_RULES, FLEET_DOCS, nodeListText, type OkNode } from "./drift.js";
import {
  SEVERITY_ORDER,
  type FleetNodeSummary,
  type FleetReport,
  type MergedFinding,
  type NodeGroup,
  type NodeResult,
  type NodeStatus,
} from "./types.js";

/** n2 before n10. */
const collator = new Intl.Collator("en", { numeric: true });
export function compareNodeNames(a: string, b: string): number {
  return collator.compare(a, b);
}

function groupId(index: number): string {
  let id = "";
  let n = index;
  do {
    id = String.fromCharCode(65 + (n % 26)) + id;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return id;
}

export function groupNodes(nodes: OkNode[]): NodeGroup[] {
  const byKey = new Map<string, NodeGroup>();
  for (const n of nodes) {
    const key = fingerprintKey(n.fingerprint);
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

/** Per-node findings merged: the same rule with the same message on many nodes is one entry. */
export function dedupeFindings(perNode: Array<{ node: string; findings: Finding[] }>): MergedFinding[] {
  const merged = new Map<string, MergedFinding>();
  for (const { node, findings } of perNode) {
    for (const f of findings) {
      const key = `${f.ruleId}\u0000${f.severity}\u0000${f.message}\u0000${f.fix.summary}`;
      const existing = merged.get(key);
      if (existing) existing.nodes.push(node);
      else merged.set(key, { ...f, nodes: [node] });
    }
  }
  return sortFindings([...merged.values()]);
}

function sortFindings(findings: MergedFinding[]): MergedFinding[] {
  for (const f of findings) f.nodes.sort(compareNodeNames);
  return findings.sort(
    (a, b) =>
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
      b.nodes.length - a.nodes.length ||
      a.ruleId.localeCompare(b.ruleId),
  );
}

const STATE_FINDINGS: Record<
  Exclude<NodeStatus, "ok">,
  { id: string; title: string; severity: Severity; fix: string }
> = {
  down: {
    id: "fleet-node-down",
    title: "Nodes the scheduler reports down",
    severity: "warning",
    fix: "Bring the nodes back (`scontrol update NodeName=... State=RESUME` once fixed) or leave them out with --nodelist; they were not checked.",
  },
  unreachable: {
    id: "fleet-node-unreachable",
    title: "Nodes that never ran the check",
    severity: "error",
    fix: "Run `srun -w NODE hostname` (or look at the pod's events) to see why the node does not start work.",
  },
  hung: {
    id: "fleet-node-hung",
    title: "Nodes that did not answer within the per-node limit",
    severity: "error",
    fix: "Log in and run the interpreter by hand (`python3 -c 'import torch'`); a hung import or a stuck GPU shows there. Raise --node-timeout only if the node is just slow.",
  },
  failed: {
    id: "fleet-node-failed",
    title: "Nodes where the check could not run",
    severity: "error",
    fix: "Check the interpreter there (--python PATH); the reason is per node below.",
  },
  garbage: {
    id: "fleet-node-garbage",
    title: "Nodes that answered something other than a gpuprep result",
    severity: "error",
    fix: "A wrapper, shell profile or different program answers as python there; run it by hand on the node.",
  },
};

export function nodeStateFindings(nodes: NodeResult[]): MergedFinding[] {
  const findings: MergedFinding[] = [];
  for (const [status, meta] of Object.entries(STATE_FINDINGS) as Array<
    [Exclude<NodeStatus, "ok">, (typeof STATE_FINDINGS)["down"]]
  >) {
    const hit = nodes.filter((n) => n.status === status).sort((a, b) => compareNodeNames(a.node, b.node));
    if (hit.length === 0) continue;
    findings.push({
      ruleId: meta.id,
      severity: meta.severity,
      title: meta.title,
      message: `${hit.length} of ${nodes.length} node${nodes.length === 1 ? "" : "s"} ${status === "down" ? "are down" : `are ${status}`}: ${nodeListText(
        hit.map((n) => n.node),
        8,
      )}.`,
      evidence: hit.slice(0, 50).map((n) => ({ label: n.node, value: n.reason ?? status })),
      fix: { summary: meta.fix, commands: [] },
      docs: `${FLEET_DOCS}#${meta.id}`,
      nodes: hit.map((n) => n.node),
    });
  }
  return findings;
}

export interface MergeOptions {
  transport: string;
  mode: FleetReport["mode"];
  /** Per-node diagnosis; the doctor's rules by default. */
  diagnose?: (facts: Facts, kb: KnowledgeBase) => Finding[];
  /** The doctor rules to run per node (fleet scan: the architecture-coverage ones). */
  rules?: readonly Rule[];
  /** Findings about the fleet as a whole from elsewhere (the multi-node all-reduce). */
  extraFleetFindings?: MergedFinding[];
}

/** One rule that throws on a strange node must not end the merge for the other nodes. */
function diagnoseSafely(
  diagnose: NonNullable<MergeOptions["diagnose"]>,
  facts: Facts,
  kb: KnowledgeBase,
): Finding[] {
  try {
    return diagnose(facts, kb);
  } catch (error) {
    return [
      {
        ruleId: "fleet-node-diagnosis-failed",
        severity: "error",
        title: "The node's facts could not be diagnosed",
        message: `gpuprep failed on this node's facts: ${(error as Error).message ?? String(error)}`.slice(
          0,
          300,
        ),
        evidence: [],
        fix: {
          summary: "Report it as a gpuprep bug with the node's snapshot (doctor --save).",
          commands: [],
        },
        docs: `${FLEET_DOCS}#fleet-node-diagnosis-failed`,
      },
    ];
  }
}

export function mergeFleet(results: NodeResult[], kb: KnowledgeBase, options: MergeOptions): FleetReport {
  const diagnose =
    options.diagnose ?? ((facts: Facts, k: KnowledgeBase) => diagnoseAll(facts, k, options.rules));
  const nodes = [...results].sort((a, b) => compareNodeNames(a.node, b.node));
  const ok: OkNode[] = [];
  const perNode: Array<{ node: string; findings: Finding[] }> = [];
  // Nodes of one environment (most of a healthy fleet) are diagnosed once: rules are pure and
  // read none of the naming fields the key leaves out. A custom diagnose (validate) looks nodes
  // up by name, so it runs per node.
  const byContent = new Map<string, { findings: Finding[]; fingerprint: ReturnType<typeof fingerprintOf> }>();
  for (const n of nodes) {
    if (n.status !== "ok" || !n.facts) continue;
    const key = options.diagnose ? null : (n.contentKey ?? factsContentKey(n.facts));
    let known = key === null ? undefined : byContent.get(key);
    if (!known) {
      known = { findings: diagnoseSafely(diagnose, n.facts, kb), fingerprint: fingerprintOf(n.facts) };
      if (key !== null) byContent.set(key, known);
    }
    ok.push({
      node: n.node,
      facts: n.facts,
      fingerprint: known.fingerprint,
      ...(n.labels ? { labels: n.labels } : {}),
    });
    perNode.push({ node: n.node, findings: known.findings });
  }
  const groups = groupNodes(ok);
  const groupOf = new Map<string, string>();
  for (const g of groups) for (const node of g.nodes) groupOf.set(node, g.id);

  const drift = DRIFT_RULES.flatMap((rule) => {
    try {
      return rule.check(ok, kb);
    } catch {
      return [];
    }
  });
  const fleetFindings = sortFindings([
    ...nodeStateFindings(nodes),
    ...drift,
    ...(options.extraFleetFindings ?? []),
  ]);
  const nodeFindings = dedupeFindings(perNode);

  const findingsOf = new Map(perNode.map((p) => [p.node, p.findings]));
  const summaries: FleetNodeSummary[] = nodes.map((n) => {
    const findings = findingsOf.get(n.node) ?? [];
    return {
      node: n.node,
      status: n.status,
      reason: n.reason,
      group: groupOf.get(n.node) ?? null,
      durationMs: n.durationMs,
      errors: findings.filter((f) => f.severity === "error").length,
      warnings: findings.filter((f) => f.severity === "warning").length,
      infos: findings.filter((f) => f.severity === "info").length,
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
  const all = [...fleetFindings, ...nodeFindings];
  const count = (s: Severity) => all.filter((f) => f.severity === s).length;
  const errors = count("error");
  return {
    transport: options.transport,
    mode: options.mode,
    nodes: summaries,
    groups,
    fleetFindings,
    nodeFindings,
    summary: {
      nodes: nodes.length,
      ok: ok.length,
      notOk: nodes.length - ok.length,
      groups: groups.length,
      errors,
      warnings: count("warning"),
      infos: count("info"),
      exitCode: errors > 0 ? 1 : 0,
    },
  };
}
