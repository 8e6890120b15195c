/**
 * The fleet HTML report: every node with its verdict (its worst finding, not only whether its probe
 * answered) and the findings that fired on it by title; the groups by how they differ from the
 * largest; every finding with its nodes (folded: gpu[01-16]); the nodes not checked, when any.
 * Built on the generic self-contained renderer (no script, no fetches), and kept within a 1280 px
 * window: no rule ids as column heads, no column per fingerprint field, long words shortened.
 */
import { FINGERPRINT_LABELS } from "../fleet/fingerprint.js";
import { nodeListText } from "../fleet/hostlist.js";
import { describeDifference } from "../fleet/rule-kit.js";
import type {
  FingerprintField,
  FleetNodeSummary,
  FleetReport,
  MergedFinding,
  NodeGroup,
} from "../fleet/types.js";
import type { Severity } from "../findings/types.js";
import { statusOf } from "../judge/vocabulary.js";
import type { HtmlCell, HtmlReport, HtmlSection, HtmlStatus } from "./html.js";

/** A severity's colour is validate's status for it: the one mapping in src/judge/vocabulary.ts. */
const STATUS = (severity: Severity): HtmlStatus => statusOf(severity);
const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
const MARK: Record<Severity, string> = { error: "✗", warning: "!", info: "i" };
/** Fields always shown for the largest group; the others show only what differs from it. */
const KEY_FIELDS: FingerprintField[] = [
  "gpus",
  "driver",
  "python",
  "torch",
  "torchCuda",
  "nccl",
  "gpuHealth",
];

/** A word longer than `max` (a path, a package list without spaces) is cut: the table must wrap. */
function wrappable(text: string, max = 48): string {
  return text.replace(new RegExp(`\\S{${max + 1},}`, "g"), (word) => `${word.slice(0, max - 1)}…`);
}

function findingsByNode(report: FleetReport): Map<string, MergedFinding[]> {
  const byNode = new Map<string, MergedFinding[]>();
  for (const f of [...report.fleetFindings, ...report.nodeFindings])
    for (const node of f.nodes) byNode.set(node, [...(byNode.get(node) ?? []), f]);
  return byNode;
}

/** The node's verdict: not checked (its state), else its worst finding's severity, else ok. */
function verdictCell(n: FleetNodeSummary, mine: readonly MergedFinding[]): HtmlCell {
  if (n.status !== "ok") return { text: n.status, status: n.status === "down" ? "skip" : "fail" };
  const worst = mine.reduce<Severity | null>(
    (w, f) => (w === null || ORDER[f.severity] < ORDER[w] ? f.severity : w),
    null,
  );
  if (worst === null || worst === "info") return { text: "ok", status: "pass" };
  return { text: worst, status: STATUS(worst) };
}

function nodeRows(report: FleetReport): HtmlSection {
  const byNode = findingsByNode(report);
  return {
    kind: "table",
    title: "Nodes",
    columns: ["node", "verdict", "group", "findings"],
    rows: report.nodes.map((n) => {
      const mine = [...(byNode.get(n.node) ?? [])].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
      const listed = mine.map((f) => `${MARK[f.severity]} ${f.title}`).join("; ");
      return [
        n.node,
        verdictCell(n, mine),
        n.group ?? "-",
        wrappable(n.status === "ok" ? listed || "none" : (n.reason ?? "")),
      ];
    }),
    note: "verdict: the worst finding on the node (✗ error, ! warning, i info), or why it was not checked.",
  };
}

function groupDescription(group: NodeGroup, reference: NodeGroup | undefined): string {
  if (!reference || reference === group)
    return KEY_FIELDS.map((f) => `${FINGERPRINT_LABELS[f]}: ${group.fingerprint[f]}`).join(" · ");
  const fields = (Object.keys(FINGERPRINT_LABELS) as FingerprintField[]).filter(
    (f) => group.fingerprint[f] !== reference.fingerprint[f],
  );
  return `differs from ${reference.id}: ${fields
    .map(
      (f) =>
        `${FINGERPRINT_LABELS[f]} ${describeDifference(reference.fingerprint[f], group.fingerprint[f], 160)}`,
    )
    .join(" · ")}`;
}

function findingRows(list: MergedFinding[]): Array<Array<string | HtmlCell>> {
  return list.map((f) => [
    { text: f.severity, status: STATUS(f.severity) },
    wrappable(f.title),
    wrappable(`${f.message} (${f.ruleId})`),
    `${f.nodes.length}: ${nodeListText(f.nodes, 6)}`,
    wrappable(f.fix.summary),
  ]);
}

export function toFleetHtmlReport(report: FleetReport): HtmlReport {
  const s = report.summary;
  const notChecked = report.nodes.filter((n) => n.status !== "ok");
  const reference = report.groups[0];
  const sections: HtmlSection[] = [
    { kind: "text", title: "Judged against", paragraphs: [report.reference.description] },
    nodeRows(report),
    {
      kind: "table",
      title: "Groups",
      columns: ["group", "nodes", "what they run"],
      rows: report.groups.map((g) => [
        g.id,
        `${g.nodes.length}: ${nodeListText(g.nodes, 6)}`,
        wrappable(groupDescription(g, reference)),
      ]),
    },
  ];
  const findingColumns = ["severity", "title", "what", "nodes", "fix"];
  if (report.fleetFindings.length)
    sections.push({
      kind: "table",
      title: "Across nodes",
      columns: findingColumns,
      rows: findingRows(report.fleetFindings),
    });
  if (report.nodeFindings.length)
    sections.push({
      kind: "table",
      title: "On the nodes",
      columns: findingColumns,
      rows: findingRows(report.nodeFindings),
    });
  if (notChecked.length)
    sections.push({
      kind: "table",
      title: "Nodes not checked",
      columns: ["node", "status", "reason"],
      rows: notChecked.map((n) => [
        n.node,
        { text: n.status, status: n.status === "down" ? "skip" : "fail" },
        wrappable(n.reason ?? ""),
      ]),
    });
  return {
    title: `gpuprep fleet ${report.mode}`,
    subtitle: `${s.nodes} nodes via ${report.transport}`,
    summary: [
      { label: "nodes", value: s.nodes },
      { label: "checked", value: s.ok, status: "pass" },
      { label: "not checked", value: s.notOk, status: s.notOk > 0 ? "fail" : "pass" },
      { label: "groups", value: s.groups, status: s.groups > 1 ? "warn" : "pass" },
      { label: "errors", value: s.errors, status: s.errors > 0 ? "fail" : "pass" },
      { label: "warnings", value: s.warnings, status: s.warnings > 0 ? "warn" : "pass" },
    ],
    sections,
  };
}
