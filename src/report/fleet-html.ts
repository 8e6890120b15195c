/**
 * The fleet HTML report: a node x check matrix (every check that fired anywhere is a column,
 * every node a row), the groups with the fields that set them apart, and every finding with its
 * nodes. Built on the generic self-contained renderer (no script, no fetches).
 */
import { FINGERPRINT_LABELS } from "../fleet/fingerprint.js";
import { nodeListText } from "../fleet/hostlist.js";
import type { FingerprintField, FleetReport, MergedFinding } from "../fleet/types.js";
import type { Severity } from "../rule-helpers/types.js";
import { statusOf } from "../judge/vocabulary.js";
import type { HtmlCell, HtmlReport, HtmlStatus } from "./html.js";

/** A severity's colour is validate's status for it: the one mapping in src/judge/vocabulary.ts. */
const STATUS = (severity: Severity): HtmlStatus => statusOf(severity);
const CELL: Record<Severity, string> = { error: "error", warning: "warn", info: "info" };

export function toFleetHtmlReport(report: FleetReport): HtmlReport {
  const findings = [...report.fleetFindings, ...report.nodeFindings];
  // One column per check id; a node's cell shows the worst severity that check gave it.
  const checks = [...new Set(findings.map((f) => f.ruleId))];
  const worst = new Map<string, Severity>();
  const order: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  for (const f of findings) {
    for (const node of f.nodes) {
      const key = `${node}\u0000${f.ruleId}`;
      const seen = worst.get(key);
      if (!seen || order[f.severity] < order[seen]) worst.set(key, f.severity);
    }
  }
  const matrixRows = report.nodes.map((n) => {
    const status: HtmlCell = {
      text: n.status,
      status: n.status === "ok" ? "pass" : n.status === "down" ? "skip" : "fail",
    };
    const cells = checks.map((id): HtmlCell | string => {
      const severity = worst.get(`${n.node}\u0000${id}`);
      return severity
        ? { text: CELL[severity], status: STATUS(severity) }
        : n.status === "ok"
          ? { text: "ok", status: "pass" }
          : "";
    });
    return [n.node, status, n.group ?? "-", ...cells];
  });
  const fields = (Object.keys(FINGERPRINT_LABELS) as FingerprintField[]).filter(
    (f) =>
      new Set(report.groups.map((g) => g.fingerprint[f])).size > 1 ||
      ["gpus", "driver", "torch", "python"].includes(f),
  );
  const findingRows = (list: MergedFinding[]) =>
    list.map((f) => [
      { text: f.severity, status: STATUS(f.severity) },
      f.ruleId,
      f.title,
      f.message,
      `${f.nodes.length}: ${nodeListText(f.nodes, 10)}`,
      f.fix.summary,
    ]);
  const s = report.summary;
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
    sections: [
      {
        kind: "table",
        title: "Nodes x checks",
        columns: ["node", "status", "group", ...checks],
        rows: matrixRows,
        note: "A cell is the worst severity that check gave the node; ok: it did not fire there.",
      },
      {
        kind: "table",
        title: "Groups",
        columns: ["group", "nodes", ...fields.map((f) => FINGERPRINT_LABELS[f])],
        rows: report.groups.map((g) => [
          g.id,
          `${g.nodes.length}: ${nodeListText(g.nodes, 10)}`,
          ...fields.map((f) => g.fingerprint[f]),
        ]),
      },
      {
        kind: "table",
        title: "Across nodes",
        columns: ["severity", "id", "title", "what", "nodes", "fix"],
        rows: findingRows(report.fleetFindings),
      },
      {
        kind: "table",
        title: "On the nodes",
        columns: ["severity", "id", "title", "what", "nodes", "fix"],
        rows: findingRows(report.nodeFindings),
      },
      {
        kind: "table",
        title: "Nodes not checked",
        columns: ["node", "status", "reason"],
        rows: report.nodes
          .filter((n) => n.status !== "ok")
          .map((n) => [
            n.node,
            { text: n.status, status: n.status === "down" ? "skip" : "fail" },
            n.reason ?? "",
          ]),
      },
    ],
  };
}
