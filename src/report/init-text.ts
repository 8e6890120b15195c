/**
 * `gpuprep init`'s text report: every decision with its reason and sources, the pins not obeyed,
 * the files and what happens to each (their diffs on a dry run), and what to run next.
 */
import { relative } from "node:path";
import type { Style } from "./style.js";
import type { Plan } from "../plan/index.js";
import { blocked, type FilePlan } from "../generate/write.js";
import { unifiedDiff } from "../generate/diff.js";
import { setupScript } from "../generate/paths.js";
import { separateDetails, wrapProse } from "../util/wrap.js";
import { sourceText } from "../kb/source-label.js";

interface InitOutcome {
  plan: Plan;
  writes: FilePlan[];
  /** What generating the files had to say, after the plan's own warnings. */
  notes: string[];
  dryRun: boolean;
  /** Where replaced files were backed up (--force), or null. */
  backup: string | null;
}

interface InitTextOptions {
  /** -v: the long lists a reason carries (the images passed over, ...) are printed too. */
  verbose?: boolean;
}

/** `head` then `text` wrapped at its clauses, continuation lines indented under the text. */
function wrapped(head: string, text: string): string[] {
  const pad = " ".repeat(head.length);
  return wrapProse(text).map((line, i) => `${i === 0 ? head : pad}${line}`);
}

/** A reason: wrapped, its long parenthesised lists as items under it with -v, else one line saying how many. */
function reasonLines(head: string, reason: string, verbose: boolean): string[] {
  const { text, details } = separateDetails(reason);
  const out = wrapped(head, text);
  const pad = " ".repeat(head.length);
  if (details.length === 0) return out;
  if (!verbose) return [...out, `${pad}(… ${details.length} more, listed with -v)`];
  for (const item of details) out.push(...wrapped(`${pad}- `, item));
  return out;
}

/**
 * A unified diff in colour, as git shows one: the two file headers bold, hunk headers blue, removed
 * lines red, added green. Only the first two lines are headers: a removed line "-- x" reads "--- x".
 */
function paintDiff(diff: string, style: Style): string {
  const paint = (line: string, index: number): string => {
    if (index < 2) return style.bold(line);
    if (line.startsWith("@@")) return style.blue(line);
    if (line.startsWith("+")) return style.green(line);
    if (line.startsWith("-")) return style.red(line);
    return line;
  };
  return diff.split("\n").map(paint).join("\n");
}

const STATUS_TEXT: Record<FilePlan["status"], string> = {
  create: "new",
  unchanged: "unchanged",
  update: "updated",
  edited: "EDITED by you: kept unless --force",
  foreign: "exists, not written by gpuprep: kept unless --force",
  "user-file": "your file, lines added (backup kept)",
};

function renderPlan(
  { plan, writes, notes, dryRun }: InitOutcome,
  style: Style,
  { verbose = false }: InitTextOptions,
): string {
  const out: string[] = [];
  out.push(style.bold(`gpuprep init: ${plan.project.name} on ${plan.target.gpuName} → ${plan.strategy}`), "");
  for (const d of plan.decisions) {
    out.push(`  ${style.bold(d.topic)}: ${d.choice}`);
    out.push(...reasonLines("    why: ", d.reason, verbose));
    for (const source of new Set(d.sources)) out.push(`    source: ${sourceText(source)}`);
  }
  if (plan.conflicts.length > 0) {
    out.push("", style.bold("pins in the project that are not obeyed:"));
    for (const c of plan.conflicts) out.push(...reasonLines("  - ", c.message, verbose));
  }
  const warnings = [...plan.warnings, ...notes];
  if (warnings.length > 0) {
    out.push("", style.bold("notes:"));
    for (const w of warnings) out.push(...reasonLines("  - ", w, verbose));
  }
  out.push("", style.bold(dryRun ? "files (dry run: nothing written):" : "files:"));
  for (const w of writes) out.push(`  ${w.file.path}: ${STATUS_TEXT[w.status]}`);
  if (dryRun) {
    for (const w of writes) {
      if (w.status === "unchanged") continue;
      out.push("", paintDiff(unifiedDiff(w.file.path, w.before, w.file.content).trimEnd(), style));
    }
  }
  return out.join("\n") + "\n";
}

export function renderInitText(outcome: InitOutcome, style: Style, options: InitTextOptions = {}): string {
  const { plan, writes, dryRun, backup } = outcome;
  let text = renderPlan(outcome, style, options);
  if (backup) text += `\nbackups of replaced files: ${relative(process.cwd(), backup) || backup}\n`;
  if (!dryRun) text += `\nnext: ${setupScript(plan)} (SETUP.md explains the setup)\n`;
  else if (blocked(writes).length > 0)
    text +=
      "\nwriting would stop at the files marked above: rerun with --force to replace them (backups kept)\n";
  return text;
}
