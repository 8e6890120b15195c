/**
 * The HTML of `gpuprep memory`: a stacked bar per estimate (what holds the memory at the step's
 * peak) drawn against the device's usable memory, the verdict, and the measured trials. Inline SVG
 * and inline styles only: the page fetches nothing and runs no script, so it opens anywhere,
 * offline, and can be attached to a ticket as one file.
 */
import { escapeHtml } from "./html.js";
import { largestBatchLine } from "./memory-text.js";
import type { MemoryReport } from "../memory/report-types.js";
import type { MemoryBreakdown, MemoryEstimate, MeasuredTrial } from "../memory/types.js";

export type { MemoryReport };

/** The breakdown's parts in stacking order, with a label and a colour each. */
export const BREAKDOWN_PARTS: Array<{ key: keyof MemoryBreakdown; label: string; color: string }> = [
  { key: "parameters", label: "parameters", color: "#0969da" },
  { key: "gradients", label: "gradients", color: "#8250df" },
  { key: "optimizerState", label: "optimizer state", color: "#bf3989" },
  { key: "activations", label: "activations", color: "#1a7f37" },
  { key: "temporaries", label: "temporaries", color: "#9a6700" },
  { key: "cudaContext", label: "CUDA context", color: "#57606a" },
  { key: "allocatorOverhead", label: "allocator overhead", color: "#afb8c1" },
];

const GIB = 2 ** 30;
const gib = (bytes: number): string => `${(bytes / GIB).toFixed(2)} GiB`;

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:24px 32px;color:#1f2328;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #d0d7de}
th{background:#f6f8fa}.fits{color:#1a7f37;font-weight:600}.nofit{color:#cf222e;font-weight:600}.note{color:#59636e;font-size:12px}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#1f2328}
`;

/** Chart geometry, exported so the tests check the drawing against the same numbers. */
const CHART = { labelWidth: 170, barWidth: 760, rowHeight: 34, top: 28 };

/** Bytes per pixel: the device total, or the largest estimate when one exceeds it. */
function chartScale(report: MemoryReport): number {
  return Math.max(report.device.totalBytes, ...report.estimates.map((e) => e.totalBytes), 1);
}

function estimateLabel(e: MemoryEstimate): string {
  return `${e.tier} · batch ${e.batch}`;
}

function breakdownChart(report: MemoryReport): string {
  const { labelWidth, barWidth, rowHeight, top } = CHART;
  const scale = chartScale(report);
  const x = (bytes: number) => labelWidth + (bytes / scale) * barWidth;
  const height = top + report.estimates.length * rowHeight + 24;
  const parts: string[] = [];
  // The device's memory as a light frame behind the bars.
  parts.push(
    `<rect class="device" x="${labelWidth}" y="${top - 4}" width="${((report.device.totalBytes / scale) * barWidth).toFixed(2)}" height="${report.estimates.length * rowHeight}" fill="#f6f8fa" stroke="#d0d7de"><title>${escapeHtml(`${report.device.name}: ${gib(report.device.totalBytes)}`)}</title></rect>`,
  );
  report.estimates.forEach((estimate, row) => {
    const y = top + row * rowHeight;
    parts.push(
      `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${escapeHtml(estimateLabel(estimate))}</text>`,
    );
    let offset = 0;
    for (const part of BREAKDOWN_PARTS) {
      const bytes = estimate.breakdown[part.key];
      if (bytes <= 0) continue;
      parts.push(
        `<rect class="seg" data-estimate="${row}" data-part="${part.key}" data-bytes="${bytes}" x="${x(offset).toFixed(2)}" y="${y}" width="${((bytes / scale) * barWidth).toFixed(2)}" height="24" fill="${part.color}"><title>${escapeHtml(`${part.label}: ${gib(bytes)}`)}</title></rect>`,
      );
      offset += bytes;
    }
    parts.push(
      `<text x="${Math.min(x(offset) + 6, labelWidth + barWidth - 70).toFixed(2)}" y="${y + 17}">${escapeHtml(gib(estimate.totalBytes))}</text>`,
    );
  });
  const usableX = x(report.device.usableBytes).toFixed(2);
  const bottom = top + report.estimates.length * rowHeight;
  parts.push(
    `<line class="usable" x1="${usableX}" y1="${top - 12}" x2="${usableX}" y2="${bottom}" stroke="#cf222e" stroke-width="2" stroke-dasharray="5 3"></line>`,
    `<text x="${usableX}" y="${top - 14}" text-anchor="middle">usable ${escapeHtml(gib(report.device.usableBytes))}</text>`,
    `<text x="${labelWidth}" y="${bottom + 16}">0</text>`,
    `<text x="${labelWidth + barWidth}" y="${bottom + 16}" text-anchor="end">${escapeHtml(gib(scale))}</text>`,
  );
  const legend = BREAKDOWN_PARTS.map(
    (p) =>
      `<span style="display:inline-block;margin-right:14px"><span style="display:inline-block;width:10px;height:10px;background:${p.color};margin-right:4px"></span>${escapeHtml(p.label)}</span>`,
  ).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="memory breakdown against the usable memory" viewBox="0 0 ${labelWidth + barWidth + 20} ${height}" width="100%" preserveAspectRatio="xMinYMin meet">${parts.join("\n")}</svg>`;
  return `${svg}\n<p class="note">${legend}</p>`;
}

function breakdownTable(report: MemoryReport): string {
  const head = ["", ...report.estimates.map(estimateLabel)].map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const rows = BREAKDOWN_PARTS.map(
    (p) =>
      `<tr><td>${escapeHtml(p.label)}</td>${report.estimates.map((e) => `<td>${gib(e.breakdown[p.key])}</td>`).join("")}</tr>`,
  );
  rows.push(
    `<tr><th>total</th>${report.estimates.map((e) => `<th>${gib(e.totalBytes)}</th>`).join("")}</tr>`,
  );
  const accuracy = report.estimates
    .map((e) =>
      e.accuracy
        ? `${e.tier} tier: measured accuracy median ${e.accuracy.medianAbsErrorPct} %, p95 ${e.accuracy.p95AbsErrorPct} % (${e.accuracy.source})`
        : `${e.tier} tier: accuracy not measured`,
    )
    .map((line) => `<p class="note">${escapeHtml(line)}</p>`)
    .join("");
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows.join("\n")}</tbody></table>${accuracy}`;
}

function scaledRuleLine(rule: NonNullable<MemoryReport["scaledRule"]>): string {
  const from = rule.currentSource ? ` (current memory from ${rule.currentSource})` : "";
  const off =
    rule.offFromMeasuredPct !== undefined && rule.offFromMeasuredPct !== null
      ? `; ${Math.abs(rule.offFromMeasuredPct).toFixed(1)} % ${rule.offFromMeasuredPct >= 0 ? "above" : "below"} the measured largest batch`
      : "";
  return `${rule.formula}${from}${off}`;
}

function verdictBlock(report: MemoryReport): string {
  const v = report.verdict;
  const line = v.fits
    ? `<span class="fits">Fits</span>: ${gib(v.headroomBytes)} to spare of ${gib(report.device.usableBytes)} usable`
    : `<span class="nofit">Does not fit</span>: ${gib(-v.headroomBytes)} missing of ${gib(report.device.usableBytes)} usable`;
  const facts = [
    `${escapeHtml(report.device.name)}: ${gib(report.device.totalBytes)}, usable ${gib(report.device.usableBytes)} after a ${(report.device.marginFraction * 100).toFixed(0)} % margin (${escapeHtml(report.device.source)})`,
    escapeHtml(largestBatchLine(report)),
    report.traceFallback ? `tier: formula - ${escapeHtml(report.traceFallback)}` : "",
    report.measuredMaxBatch !== null ? `largest batch measured: ${report.measuredMaxBatch}` : "",
    report.bestThroughputBatch !== null ? `best time per sample at batch ${report.bestThroughputBatch}` : "",
    report.scaledRule ? `seed 001's rule: ${escapeHtml(scaledRuleLine(report.scaledRule))}` : "",
  ].filter(Boolean);
  return `<p>${line}</p><ul>${facts.map((f) => `<li>${f}</li>`).join("")}</ul>`;
}

function trialsTable(trials: MeasuredTrial[]): string {
  const cell = (v: string) => `<td>${escapeHtml(v)}</td>`;
  const rows = trials.map(
    (t) =>
      `<tr>${cell(String(t.batch))}${cell(t.status)}${cell(t.peakAllocatedBytes === null ? "—" : gib(t.peakAllocatedBytes))}${cell(t.peakReservedBytes === null ? "—" : gib(t.peakReservedBytes))}${cell(t.stepMs === null ? "—" : `${t.stepMs.toFixed(1)} ms`)}${cell(t.error ?? "")}</tr>`,
  );
  return `<table><thead><tr><th>batch</th><th>result</th><th>peak allocated</th><th>peak reserved</th><th>step time</th><th>error</th></tr></thead><tbody>${rows.join("\n")}</tbody></table>`;
}

/** Geometry of the memory-against-batch chart, exported so tests check the drawing. */
const CURVE = { left: 70, width: 760, top: 20, height: 240 };

/** Where a batch and a byte count fall on the curve's axes. */
interface CurveScale {
  x: (batch: number) => number;
  y: (bytes: number) => number;
  ymax: number;
}

/** Batches on a log2 axis over every batch shown, bytes linear from 0 to the largest shown. */
function curveScale(
  report: MemoryReport,
  points: MemoryEstimate[],
  trials: MeasuredTrial[],
  batches: number[],
): CurveScale {
  const { left, width, top, height } = CURVE;
  const lo = Math.log2(Math.max(1, Math.min(...batches)));
  const hi = Math.max(lo + 1, Math.log2(Math.max(...batches, report.searchRange.min + 1)));
  const ymax = Math.max(
    report.device.totalBytes,
    ...points.map((p) => p.totalBytes),
    ...trials.map((t) => t.peakReservedBytes ?? 0),
    1,
  );
  return {
    x: (b) => left + ((Math.log2(Math.max(1, b)) - lo) / (hi - lo)) * width,
    y: (bytes) => top + height - (bytes / ymax) * height,
    ymax,
  };
}

/** The estimate's curve and a point per estimated batch. */
function estimateMarks(points: MemoryEstimate[], { x, y }: CurveScale): string[] {
  const parts: string[] = [];
  const path = points
    .map((p, i) => `${i ? "L" : "M"}${x(p.batch).toFixed(1)},${y(p.totalBytes).toFixed(1)}`)
    .join(" ");
  if (points.length > 1)
    parts.push(
      `<path class="estimate-curve" d="${path}" fill="none" stroke="#0969da" stroke-width="2"></path>`,
    );
  for (const p of points)
    parts.push(
      `<circle class="estimate-point" data-batch="${p.batch}" data-bytes="${p.totalBytes}" cx="${x(p.batch).toFixed(1)}" cy="${y(p.totalBytes).toFixed(1)}" r="3.5" fill="#0969da"><title>${escapeHtml(`${p.tier} estimate, batch ${p.batch}: ${gib(p.totalBytes)}`)}</title></circle>`,
    );
  return parts;
}

/** A square per trial that ran, a cross per trial that failed, at its peak reserved bytes. */
function trialMarks(trials: MeasuredTrial[], { x, y }: CurveScale): string[] {
  return trials.map((t) => {
    const cx = x(t.batch).toFixed(1);
    const cy = y(t.peakReservedBytes ?? 0).toFixed(1);
    const label = escapeHtml(
      `measured batch ${t.batch}: ${t.status}, ${gib(t.peakReservedBytes ?? 0)} reserved`,
    );
    return t.status === "ok"
      ? `<rect class="trial" data-batch="${t.batch}" x="${Number(cx) - 4}" y="${Number(cy) - 4}" width="8" height="8" fill="#1a7f37"><title>${label}</title></rect>`
      : `<text class="trial-failed" data-batch="${t.batch}" x="${cx}" y="${cy}" text-anchor="middle" fill="#cf222e">×<title>${label}</title></text>`;
  });
}

/** The usable line across, and the answer's line up where there is one. */
function usableAndAnswerMarks(report: MemoryReport, { x, y }: CurveScale): string[] {
  const { left, width, top, height } = CURVE;
  const uy = y(report.device.usableBytes).toFixed(1);
  const parts = [
    `<line class="usable" x1="${left}" y1="${uy}" x2="${left + width}" y2="${uy}" stroke="#cf222e" stroke-dasharray="5 3"></line>`,
    `<text x="${left + width}" y="${Number(uy) - 4}" text-anchor="end">usable ${escapeHtml(gib(report.device.usableBytes))}</text>`,
  ];
  const answer = report.verdict.maxBatch;
  if (answer !== null) {
    const ax = x(answer).toFixed(1);
    parts.push(
      `<line class="answer" x1="${ax}" y1="${top}" x2="${ax}" y2="${top + height}" stroke="#1a7f37" stroke-dasharray="2 2"></line>`,
      `<text x="${ax}" y="${top + height + 14}" text-anchor="middle">${escapeHtml(`largest: ${answer}`)}</text>`,
    );
  }
  return parts;
}

/**
 * Memory against batch size: the estimate's curve (total on the device per estimated batch), the
 * measured trials (peak reserved, a cross where they failed), the usable line and the answer.
 * Batches on a log2 axis, bytes linear from 0.
 */
function batchCurve(report: MemoryReport): string {
  const points = report.estimates
    .filter((e) => e.tier !== "measured" && e.tier !== "scaled-rule")
    .sort((a, b) => a.batch - b.batch);
  const trials = report.trials.filter((t) => t.peakReservedBytes !== null);
  if (points.length < 2 && trials.length === 0) return "";
  const { left, width, top, height } = CURVE;
  const batches = [...points.map((p) => p.batch), ...trials.map((t) => t.batch), report.searchRange.min];
  const scale = curveScale(report, points, trials, batches);
  const parts = [
    `<line x1="${left}" y1="${top + height}" x2="${left + width}" y2="${top + height}" stroke="#57606a"></line>`,
    ...estimateMarks(points, scale),
    ...trialMarks(trials, scale),
    ...usableAndAnswerMarks(report, scale),
    `<text x="${left}" y="${top + height + 30}">batch (log scale) ${batches.length ? Math.min(...batches) : ""}</text>`,
    `<text x="${left - 6}" y="${top + 8}" text-anchor="end">${escapeHtml(gib(scale.ymax))}</text>`,
  ];
  return `<h2>Memory against batch size</h2><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="memory against batch size" viewBox="0 0 ${left + width + 20} ${top + height + 40}" width="100%">${parts.join("\n")}</svg>`;
}

function alternativesTable(report: MemoryReport): string {
  if (report.alternatives.length === 0) return "";
  const rows = report.alternatives.map(
    (a) =>
      `<tr><td>${escapeHtml(a.change)}</td><td>${a.batch}</td><td>${gib(a.totalBytes)}</td><td class="${a.fits ? "fits" : "nofit"}">${a.fits ? "would fit" : "would not fit"}</td></tr>`,
  );
  return `<h2>What would fit</h2><table><thead><tr><th>change</th><th>batch</th><th>estimated total</th><th></th></tr></thead><tbody>${rows.join("\n")}</tbody></table>`;
}

/** The memory section alone, for embedding in a larger report. */
function renderMemorySection(report: MemoryReport): string {
  const w = report.work;
  const workLine = [
    w.task,
    w.amp ? `${w.amp} autocast` : w.dtype,
    w.optimizer,
    w.seqLen !== null ? `seq ${w.seqLen}` : `image ${w.imageSize}`,
    w.gradCheckpointing ? "gradient checkpointing" : "",
    w.lora ? `LoRA r=${w.lora.rank} on ${w.lora.targets.join(", ") || "all Linear"}` : "",
  ]
    .filter(Boolean)
    .join(" · ");
  return [
    `<section class="memory">`,
    `<h2>Memory: ${escapeHtml(report.model.name)} (${(report.model.parameterCount / 1e6).toFixed(1)} M parameters)</h2>`,
    `<p class="note">${escapeHtml(workLine)}</p>`,
    verdictBlock(report),
    report.estimates.length
      ? breakdownChart(report) + breakdownTable(report)
      : `<p class="note">no estimate</p>`,
    batchCurve(report),
    alternativesTable(report),
    report.trials.length ? `<h2>Measured trials</h2>${trialsTable(report.trials)}` : "",
    report.notes.length
      ? `<ul class="note">${report.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
      : "",
    `</section>`,
  ].join("\n");
}

export function renderMemoryHtml(report: MemoryReport): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    // No fetches and no scripts: styles inline only.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>gpuprep memory: ${escapeHtml(report.model.name)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<h1>gpuprep memory</h1>`,
    renderMemorySection(report),
    "</body></html>",
    "",
  ].join("\n");
}
