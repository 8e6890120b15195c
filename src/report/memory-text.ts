/**
 * `gpuprep memory` as text: the verdict first, then where the memory goes (with units), the
 * device budget and where its size came from, each estimate with its tier's measured accuracy,
 * and the measured trials.
 */
import type { MemoryReport } from "../memory/report-types.js";
import type { MemoryBreakdown, MemoryEstimate } from "../memory/types.js";
import type { Style } from "./style.js";

const GIB = 1024 ** 3;

function formatBytes(bytes: number | null): string {
  if (bytes === null) return "-";
  const abs = Math.abs(bytes);
  if (abs >= GIB) return `${(bytes / GIB).toFixed(2)} GiB`;
  if (abs >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

const PARTS: [keyof MemoryBreakdown, string][] = [
  ["parameters", "parameters"],
  ["gradients", "gradients"],
  ["optimizerState", "optimizer state"],
  ["activations", "activations"],
  ["temporaries", "temporaries"],
  ["allocatorOverhead", "allocator reserve"],
  ["cudaContext", "CUDA context"],
];

function accuracyLabel(estimate: MemoryEstimate): string {
  const a = estimate.accuracy;
  if (a === null) return "accuracy not measured for this setup";
  return `measured accuracy: median ${a.medianAbsErrorPct} %, p95 ${a.p95AbsErrorPct} % (${a.source})`;
}

/** The same words in text, JSON (verdict.maxBatch, searchRange) and HTML. */
export function largestBatchLine(report: MemoryReport): string {
  const { min, max } = report.searchRange;
  const tier = report.estimates.find((e) => e.tier === "measured")
    ? "measured"
    : (report.estimates[0]?.tier ?? "");
  return `largest batch that fits in ${min}..${max} (${tier}): ${report.verdict.maxBatch ?? "none"}`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map(
    (r) => "  " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "),
  );
}

/** The model and the work it is judged for. */
function headerLines(report: MemoryReport, style: Style): string[] {
  const w = report.work;
  const out = [style.bold(`gpuprep memory: ${report.model.name}`)];
  out.push(
    `  ${w.task}, ${w.amp ? `${w.amp} autocast` : "no autocast"}, ${w.dtype} weights, ${w.optimizer}` +
      `${w.gradCheckpointing ? ", gradient checkpointing" : ""}${w.lora ? `, LoRA r=${w.lora.rank}` : ""}` +
      `${w.seqLen ? `, ${w.seqLen} tokens` : ""}${w.imageSize ? `, ${w.imageSize}px` : ""}${w.evalStep ? ", + eval step" : ""}`,
  );
  if (report.model.parameterCount)
    out.push(`  ${report.model.parameterCount.toLocaleString("en-US")} parameters`);
  return out;
}

function verdictLine(report: MemoryReport, shown: MemoryEstimate | undefined, style: Style): string {
  const { verdict, device } = report;
  if (device.totalBytes === 0)
    return style.yellow("verdict: no GPU to judge against (pass --target NAME or --from facts.json)");
  if (verdict.fits)
    return style.green(
      `verdict: fits at batch ${shown?.batch}, ${formatBytes(verdict.headroomBytes)} to spare`,
    );
  return style.red(
    `verdict: does not fit at batch ${shown?.batch}: ${formatBytes(-verdict.headroomBytes)} missing`,
  );
}

/** The verdict, the largest batch, what would change it, and the device's budget. */
function verdictLines(report: MemoryReport, shown: MemoryEstimate | undefined, style: Style): string[] {
  const { device } = report;
  const out = [verdictLine(report, shown, style)];
  if (device.totalBytes > 0) out.push(largestBatchLine(report));
  if (report.traceFallback) out.push(style.yellow(`tier: formula - ${report.traceFallback}`));
  for (const alt of report.alternatives)
    out.push(
      `  ${alt.fits ? "would fit" : "would not fit"}: ${alt.change} (batch ${alt.batch}: ${formatBytes(alt.totalBytes)})`,
    );
  out.push(
    `device: ${device.name}, ${formatBytes(device.totalBytes)} (${device.source})` +
      `${device.unified ? ", unified memory" : ""}; usable ${formatBytes(device.usableBytes)} after a ${Math.round(device.marginFraction * 100)} % margin`,
  );
  return out;
}

/** Where the memory of the judged estimate goes, part by part, with its accuracy and notes. */
function estimateLines(report: MemoryReport, shown: MemoryEstimate, style: Style): string[] {
  const out = [style.bold(`estimate (${shown.tier} tier), batch ${shown.batch}`)];
  const rows = [["part", "bytes", "share"]];
  for (const [key, label] of PARTS) {
    const bytes = shown.breakdown[key];
    rows.push([label, formatBytes(bytes), `${((100 * bytes) / Math.max(shown.totalBytes, 1)).toFixed(1)} %`]);
  }
  rows.push(["allocator peak", formatBytes(shown.peakAllocatedBytes), ""]);
  rows.push(["total on the device", formatBytes(shown.totalBytes), ""]);
  out.push(...table(rows));
  out.push(`  ${accuracyLabel(shown)}`);
  for (const note of shown.notes) out.push(style.dim(`  - ${note}`));
  if (report.estimates.length > 1) {
    out.push(
      `  estimated batches: ${report.estimates.map((e) => `${e.batch} -> ${formatBytes(e.totalBytes)}`).join(", ")}`,
    );
  }
  return out;
}

/** The trials run on the GPU, and the largest batch they confirmed. */
function trialLines(report: MemoryReport, style: Style): string[] {
  const out = [style.bold("measured on the GPU (each trial a fresh process)")];
  const rows = [["batch", "status", "peak allocated", "peak reserved", "step ms", "ms/sample"]];
  for (const t of report.trials) {
    rows.push([
      String(t.batch),
      t.status,
      formatBytes(t.peakAllocatedBytes),
      formatBytes(t.peakReservedBytes),
      t.stepMs === null ? "-" : t.stepMs.toFixed(1),
      t.stepMs === null ? "-" : (t.stepMs / t.batch).toFixed(2),
    ]);
  }
  out.push(...table(rows));
  out.push(
    `  largest batch measured to fit (confirmed by 20 more steps): ${report.measuredMaxBatch ?? "none"}` +
      `${report.bestThroughputBatch !== null ? `; best time per sample at batch ${report.bestThroughputBatch}` : ""}`,
  );
  for (const t of report.trials.filter((x) => x.error))
    out.push(style.dim(`  - batch ${t.batch}: ${t.error}`));
  return out;
}

function scaledRuleLines(rule: NonNullable<MemoryReport["scaledRule"]>, style: Style): string[] {
  return [
    style.bold("seed 001's rule"),
    `  batch ${rule.currentBatch} used ${formatBytes(rule.currentBytes)} (${rule.currentSource}): ${rule.formula} = ${rule.maxBatch}` +
      `${rule.offFromMeasuredPct !== null ? `; ${rule.offFromMeasuredPct} % from the measured answer` : ""}`,
  ];
}

export function renderMemoryText(report: MemoryReport, style: Style): string {
  // The estimate the verdict judged: the one whose total leaves the verdict's headroom.
  const shown =
    report.estimates.find((e) => report.device.usableBytes - e.totalBytes === report.verdict.headroomBytes) ??
    report.estimates[0];
  // Each section ends with a blank line; the blank lines at the end are trimmed.
  const out = [...headerLines(report, style), "", ...verdictLines(report, shown, style), ""];
  if (shown) out.push(...estimateLines(report, shown, style), "");
  if (report.trials.length > 0) out.push(...trialLines(report, style), "");
  if (report.scaledRule) out.push(...scaledRuleLines(report.scaledRule, style), "");
  for (const note of report.notes) out.push(style.dim(`note: ${note}`));
  return out.join("\n").replace(/\n+$/, "") + "\n";
}
