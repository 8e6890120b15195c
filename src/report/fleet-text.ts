/** Human fleet report: groups and how they differ, nodes not checked, drift, the worst findings. */
import { paintSeverity, type Style } from "./style.js";
import { FINGERPRINT_LABELS } from "../fleet/fingerprint.js";
import { describeDifference } from "../fleet/rule-kit.js";
import { nodeListText } from "../fleet/hostlist.js";
import type { NodeCheck } from "../fleet/check.js";
import type { FingerprintField, FleetReport, MergedFinding, NodeGroup } from "../fleet/types.js";
import type { Severity } from "../findings/types.js";

const MARK: Record<Severity, string> = { error: "✗", warning: "!", info: "i" };
/** Node findings shown in text; --json and --html carry all of them. */
const MAX_NODE_FINDINGS = 12;

const SHOWN: FingerprintField[] = [
  "gpus",
  "driver",
  "torch",
  "torchCuda",
  "python",
  "nccl",
  "numpy",
  "visibleDevices",
];

function describeGroup(group: NodeGroup, reference: NodeGroup | undefined): string[] {
  const fields = (Object.keys(FINGERPRINT_LABELS) as FingerprintField[]).filter((f) =>
    reference && reference !== group ? group.fingerprint[f] !== reference.fingerprint[f] : SHOWN.includes(f),
  );
  const prefix = reference && reference !== group ? `differs from ${reference.id}: ` : "";
  const parts = fields.map(
    (f) =>
      `${FINGERPRINT_LABELS[f]} ${reference && reference !== group ? describeDifference(reference.fingerprint[f], group.fingerprint[f]) : group.fingerprint[f]}`,
  );
  return [`${prefix}${parts.join(" · ")}`];
}

function renderFinding(style: Style, f: MergedFinding, lines: string[], withNodes: boolean): void {
  const on = withNodes
    ? ` ${style.dim(`on ${f.nodes.length} node${f.nodes.length === 1 ? "" : "s"}: ${nodeListText(f.nodes, 8)}`)}`
    : "";
  lines.push(
    `${paintSeverity(style, f.severity, MARK[f.severity])} ${style.bold(f.title)} ${style.dim(`[${f.ruleId}]`)}${on}`,
  );
  lines.push(`  ${f.message}`);
  for (const e of f.evidence.slice(0, 12)) lines.push(`    ${style.dim(`${e.label}:`)} ${e.value}`);
  if (f.evidence.length > 12) lines.push(`    ${style.dim(`... ${f.evidence.length - 12} more (--json)`)}`);
  lines.push(`  ${style.green("fix:")} ${f.fix.summary}`);
  for (const c of f.fix.commands) lines.push(`    ${c}`);
  lines.push("");
}

export function renderFleetText(report: FleetReport, style: Style): string {
  const s = report.summary;
  const lines: string[] = [];
  lines.push(
    style.bold(
      `gpuprep fleet ${report.mode} — ${s.nodes} node${s.nodes === 1 ? "" : "s"} via ${report.transport}: ${s.ok} checked, ${s.notOk} not, ${s.groups} group${s.groups === 1 ? "" : "s"}`,
    ),
  );
  lines.push(style.dim(`Judged against ${report.reference.description}.`));
  lines.push("");
  if (report.groups.length > 0) {
    lines.push(style.bold("Groups (nodes with the same GPU, driver, Python, torch, NCCL, extensions)"));
    const reference = report.groups[0];
    for (const group of report.groups) {
      lines.push(
        `  ${style.bold(group.id)}  ${group.nodes.length} node${group.nodes.length === 1 ? " " : "s"}  ${nodeListText(group.nodes, 10)}`,
      );
      for (const l of describeGroup(group, reference)) lines.push(`       ${style.dim(l)}`);
    }
    lines.push("");
  }
  const notOk = report.nodes.filter((n) => n.status !== "ok");
  if (notOk.length > 0) {
    lines.push(style.bold(`Nodes not checked (${notOk.length})`));
    for (const n of notOk.slice(0, 40)) {
      const label = n.status === "down" ? style.yellow(n.status.padEnd(11)) : style.red(n.status.padEnd(11));
      lines.push(`  ${n.node.padEnd(14)} ${label} ${n.reason ?? ""}`);
    }
    if (notOk.length > 40) lines.push(`  ${style.dim(`... ${notOk.length - 40} more (--json)`)}`);
    lines.push("");
  }
  if (report.fleetFindings.length > 0) {
    lines.push(style.bold(`Across nodes (${report.fleetFindings.length})`));
    for (const f of report.fleetFindings) renderFinding(style, f, lines, false);
  }
  if (report.nodeFindings.length > 0) {
    lines.push(
      style.bold(`On the nodes (${report.nodeFindings.length}, each once with the nodes it fired on)`),
    );
    for (const f of report.nodeFindings.slice(0, MAX_NODE_FINDINGS)) renderFinding(style, f, lines, true);
    if (report.nodeFindings.length > MAX_NODE_FINDINGS)
      lines.push(
        style.dim(`... ${report.nodeFindings.length - MAX_NODE_FINDINGS} more findings (--json, --html)`),
        "",
      );
  }
  const verdict =
    s.errors > 0
      ? style.red(style.bold("The fleet is not ready: fix the errors above."))
      : style.green(style.bold(s.warnings > 0 ? "No errors." : "No problems found."));
  lines.push(
    `${verdict} ${s.errors} error${s.errors === 1 ? "" : "s"}, ${s.warnings} warning${s.warnings === 1 ? "" : "s"}, ${s.infos} info.`,
  );
  return lines.join("\n") + "\n";
}

/** `fleet doctor --submit`: the job sent, and the command that collects its results. */
export function renderSubmittedJob(
  job: { jobId: string; script: string },
  jobDir: string | undefined,
): string {
  const dir = jobDir ? ` --job-dir ${jobDir}` : "";
  return `submitted job ${job.jobId} (script ${job.script}); when it has run: gpuprep fleet collect ${job.jobId}${dir}\n`;
}

/**
 * `fleet check --node`: one line, what NHC puts in a drain reason and node-problem-detector in a
 * condition's message (it keeps the first max_output_length characters, 80 in its example config).
 */
export function renderNodeCheckLine(check: NodeCheck): string {
  const reference = check.report.reference.source ?? "the baseline";
  if (check.problems.length === 0) return `gpuprep: OK: ${check.node} matches ${reference}\n`;
  const worst = check.problems.some((p) => p.severity === "error") ? "FAIL" : "WARN";
  const what = check.problems.map((p) => `${p.ruleId.replace(/^fleet-/, "")}: ${firstSentence(p.message)}`);
  return `gpuprep: ${worst}: ${check.node}: ${what.join("; ")}\n`.replace(/[\r\t]/g, " ");
}

function firstSentence(text: string): string {
  const cut = text.search(/\. [A-Z]/);
  return (cut > 0 ? text.slice(0, cut) : text.replace(/\.$/, "")).slice(0, 160);
}
