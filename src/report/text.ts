/** Human report: a header about the machine, then findings grouped by severity with evidence and fix. */
import { sanitizeForTerminal } from "./terminal.js";
import type { Facts } from "../facts/schema.js";
import type { Finding, Severity } from "../findings/types.js";
import { summarize } from "../diagnose/diagnose.js";
import { paintSeverity, type Style } from "./style.js";
import { machineSummary } from "./machine-summary.js";
import { knowledgeBaseOverlay } from "../kb/overlay-switch.js";

const GROUPS: { severity: Severity; heading: string; mark: string }[] = [
  { severity: "error", heading: "Errors", mark: "✗" },
  { severity: "warning", heading: "Warnings", mark: "!" },
  { severity: "info", heading: "Info", mark: "i" },
];

/**
 * Snapshot values (an OS name, a GPU name, a driver string) reach this report, and the findings'
 * text, from files anyone can edit: their terminal escapes, control characters and newlines are
 * removed as the terminal writer removes them (report/terminal.ts: whole escape sequences, so an
 * OSC title's text goes too), and a value's line breaks are shown as "?", so no value can start a
 * line of its own. (No finding on any capture spans lines.)
 */
const oneLine = (text: string) => sanitizeForTerminal(text).replace(/[\n\t\u2028\u2029]/g, "?");

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** One line per scanned lock (doctor --fetch, or wheels on disk): what was read, reached, fetched. */
export function lockScanLines(facts: Facts): string[] {
  const scan = facts.lockScan;
  if (!scan) return [];
  const where = `${scan.platform.arch}, Python ${scan.platform.python}`;
  return scan.locks.map((lock) => {
    const name = facts.project ? relativeTo(facts.project.dir, lock.path) : lock.path;
    if (lock.error) return `${name}: not read (${lock.error})`;
    const count = (status: string) => lock.packages.filter((p) => p.status === status).length;
    const offline = lock.packages.filter((p) => p.reason === "not fetched: offline").length;
    const parts = [
      `${plural(count("scanned"), "wheel")} read for ${where}`,
      ...(count("unreachable") ? [`${count("unreachable")} not reachable`] : []),
      ...(count("failed") ? [`${count("failed")} not readable`] : []),
      ...(offline ? [`${offline} not downloaded (--fetch reads them)`] : []),
    ];
    return `${name}: ${parts.join(", ")}; ${lock.bytesFetched.toLocaleString("en-US")} bytes fetched`;
  });
}

function relativeTo(dir: string, path: string): string {
  return path.startsWith(dir + "/") ? path.slice(dir.length + 1) : path;
}

/** The findings by severity, each with its evidence, fix and docs link. */
function findingLines(findings: Finding[], style: Style): string[] {
  const lines: string[] = [];
  for (const group of GROUPS) {
    const inGroup = findings.filter((f) => f.severity === group.severity);
    if (inGroup.length === 0) continue;
    lines.push(paintSeverity(style, group.severity, style.bold(`${group.heading} (${inGroup.length})`)));
    for (const finding of inGroup) {
      lines.push(
        `${paintSeverity(style, group.severity, group.mark)} ${style.bold(oneLine(finding.title))} ${style.dim(`[${finding.ruleId}]`)}`,
      );
      lines.push(`  ${oneLine(finding.message)}`);
      for (const item of finding.evidence)
        lines.push(`    ${style.dim(`${oneLine(item.label)}:`)} ${oneLine(item.value)}`);
      lines.push(`  ${style.green("fix:")} ${oneLine(finding.fix.summary)}`);
      for (const command of finding.fix.commands) lines.push(`    ${oneLine(command)}`);
      lines.push(`  ${style.dim(`docs: ${finding.docs}`)}`);
      lines.push("");
    }
  }

  return lines;
}

export function renderText(facts: Facts, findings: Finding[], style: Style): string {
  const m = machineSummary(facts);
  const lines: string[] = [];
  const row = (label: string, value: string) =>
    lines.push(`  ${style.dim(label.padEnd(8))}${oneLine(value)}`);
  const named = facts.target.python === "(none)" ? (facts.target.ref ?? "a named machine") : null;
  lines.push(style.bold(`gpuprep doctor — ${oneLine(named ?? m.target)}`));
  row("os", `${m.os} (${m.cpuArch})`);
  if (m.gpus.length === 0) row("gpu", "none");
  for (const gpu of m.gpus) row("gpu", gpu);
  row("driver", m.driver + (m.driverCuda !== "-" ? `, supports CUDA <= ${m.driverCuda}` : ""));
  if (named) {
    // doctor --target: a machine named from the KB, where nothing was gathered.
    row("python", "not gathered there: only the project's manifests are judged");
  } else {
    row("python", m.python);
    row("torch", m.torch);
    row("numpy", m.numpy);
  }
  for (const line of lockScanLines(facts)) row("lock", line);
  const overlay = knowledgeBaseOverlay();
  if (overlay)
    row(
      "kb",
      `with the overlay ${overlay.path} (${overlay.torchBuilds} torch builds from ${overlay.indexUrl}, ${overlay.fetchedAt}); --no-overlay for the release's`,
    );
  lines.push("");

  lines.push(...findingLines(findings, style));
  const s = summarize(findings);
  const verdict =
    s.errors > 0
      ? style.red(style.bold("PyTorch will not work correctly here until the errors are fixed."))
      : findings.length === 0
        ? style.green(style.bold("No problems found."))
        : style.green(style.bold("No errors."));
  lines.push(`${verdict} ${plural(s.errors, "error")}, ${plural(s.warnings, "warning")}, ${s.infos} info.`);
  return lines.join("\n") + "\n";
}
