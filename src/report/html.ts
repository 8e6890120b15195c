/**
 * A self-contained HTML report: inline CSS, inline SVG charts, no script, and a Content Security
 * Policy that forbids every fetch, so opening the file never touches the network. Generic on
 * purpose: validate, doctor and scan each turn their results into an HtmlReport.
 */

export type HtmlStatus = "pass" | "warn" | "fail" | "skip" | "info";

export interface HtmlCell {
  text: string;
  status?: HtmlStatus;
}

interface HtmlTableSection {
  kind: "table";
  title: string;
  columns: string[];
  rows: Array<Array<string | number | HtmlCell>>;
  note?: string;
}

export interface HtmlBar {
  label: string;
  value: number;
  /** Drawn as a grey bar behind the value: the peak, the expected figure. */
  reference?: number;
  status?: HtmlStatus;
  /** Text after the bar; defaults to the value with the unit. */
  valueText?: string;
  /** Thresholds drawn across the bar's row as dashed lines (pass / warn limits), in the bar's unit. */
  marks?: Array<{ value: number; label: string }>;
}

/** One entry of a chart's legend: a bar colour (by status), the grey reference, or a threshold line. */
export interface HtmlLegendEntry {
  kind: "bar" | "reference" | "mark";
  status?: HtmlStatus;
  label: string;
}

interface HtmlBarsSection {
  kind: "bars";
  title: string;
  unit: string;
  bars: HtmlBar[];
  note?: string;
  legend?: HtmlLegendEntry[];
}

interface HtmlTextSection {
  kind: "text";
  title: string;
  paragraphs: string[];
}

export type HtmlSection = HtmlTableSection | HtmlBarsSection | HtmlTextSection;

export interface HtmlReport {
  title: string;
  subtitle?: string;
  summary: Array<{ label: string; value: string | number; status?: HtmlStatus }>;
  sections: HtmlSection[];
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const CSS = `
:root{--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--skip:#6e7781;--info:#0969da;--line:#d0d7de;--ref:#e6e9ed}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:24px 32px;color:#1f2328;background:#fff;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.subtitle{color:#59636e;margin:0 0 16px}
.summary{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:90px}
.card .v{font-size:20px;font-weight:600}
.card .l{color:#59636e;font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f6f8fa;font-weight:600}
.status{font-weight:600;text-transform:uppercase;font-size:12px}
.s-pass{color:var(--pass)}.s-warn{color:var(--warn)}.s-fail{color:var(--fail)}.s-skip{color:var(--skip)}.s-info{color:var(--info)}
.note{color:#59636e;font-size:12px;margin:6px 0}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:#59636e;margin:4px 0 8px}
.legend .sw{display:inline-block;width:18px;height:10px;border-radius:2px;vertical-align:middle;margin-right:5px}
.legend .mk{display:inline-block;width:0;height:14px;border-left:2px dashed #1f2328;vertical-align:middle;margin:0 8px 0 6px}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#1f2328}
@media print{body{padding:0}}
`;

const BAR_COLORS: Record<HtmlStatus, string> = {
  pass: "#1a7f37",
  warn: "#bf8700",
  fail: "#cf222e",
  skip: "#8c959f",
  info: "#0969da",
};

function formatNumber(value: number): string {
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function renderCell(cell: string | number | HtmlCell): string {
  if (typeof cell === "number") return `<td>${escapeHtml(formatNumber(cell))}</td>`;
  if (typeof cell === "string") return `<td>${escapeHtml(cell)}</td>`;
  const cls = cell.status ? ` class="status s-${cell.status}"` : "";
  return `<td${cls}>${escapeHtml(cell.text)}</td>`;
}

function renderTable(section: HtmlTableSection): string {
  const head = section.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join("");
  const body = section.rows.map((row) => `<tr>${row.map(renderCell).join("")}</tr>`).join("\n");
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** Horizontal bars; the reference (peak) is a grey bar behind the measured one. */
function renderBarsSvg(section: HtmlBarsSection): string {
  const labelWidth = 300;
  const barArea = 560;
  const valueWidth = 200;
  const rowHeight = 26;
  const width = labelWidth + barArea + valueWidth;
  const height = section.bars.length * rowHeight + 8;
  const scale = Math.max(
    1e-12,
    ...section.bars.map((b) => Math.max(b.value, b.reference ?? 0, ...(b.marks ?? []).map((m) => m.value))),
  );
  const rows = section.bars.map((bar, index) => {
    const y = 4 + index * rowHeight;
    const w = Math.max(1, (bar.value / scale) * barArea);
    const ref =
      bar.reference !== undefined
        ? `<rect x="${labelWidth}" y="${y + 3}" width="${((bar.reference / scale) * barArea).toFixed(1)}" height="18" fill="#e6e9ed" rx="2"><title>reference ${escapeHtml(formatNumber(bar.reference))} ${escapeHtml(section.unit)}</title></rect>`
        : "";
    const fill = BAR_COLORS[bar.status ?? "info"];
    const text = bar.valueText ?? `${formatNumber(bar.value)} ${section.unit}`;
    const marks = (bar.marks ?? []).map((mark) => {
      const x = (labelWidth + (mark.value / scale) * barArea).toFixed(1);
      return `<line x1="${x}" x2="${x}" y1="${y + 1}" y2="${y + rowHeight - 3}" stroke="#1f2328" stroke-width="1.5" stroke-dasharray="3 2"><title>${escapeHtml(mark.label)}</title></line>`;
    });
    return [
      `<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escapeHtml(bar.label)}</text>`,
      ref,
      `<rect x="${labelWidth}" y="${y + 6}" width="${w.toFixed(1)}" height="12" fill="${fill}" rx="2"><title>${escapeHtml(text)}</title></rect>`,
      ...marks,
      `<text x="${labelWidth + barArea + 8}" y="${y + 16}">${escapeHtml(text)}</text>`,
    ].join("");
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(section.title)}" viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet">${rows.join("\n")}</svg>`;
}

/** The legend above a chart: HTML swatches (not SVG shapes), so charts keep one rect per bar. */
function renderLegend(entries: HtmlLegendEntry[]): string {
  const items = entries.map((entry) => {
    const label = escapeHtml(entry.label);
    if (entry.kind === "mark") return `<span><span class="mk"></span>${label}</span>`;
    const color = entry.kind === "reference" ? "#e6e9ed" : BAR_COLORS[entry.status ?? "info"];
    return `<span><span class="sw" style="background:${color}"></span>${label}</span>`;
  });
  return `<div class="legend">${items.join("")}</div>`;
}

function renderSection(section: HtmlSection): string {
  const title = `<h2>${escapeHtml(section.title)}</h2>`;
  let body: string;
  if (section.kind === "table") body = renderTable(section);
  else if (section.kind === "bars") {
    const legend = section.legend?.length ? renderLegend(section.legend) : "";
    body = section.bars.length ? legend + renderBarsSvg(section) : `<p class="note">nothing measured</p>`;
  } else body = section.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("\n");
  const note = "note" in section && section.note ? `<p class="note">${escapeHtml(section.note)}</p>` : "";
  return `<section>${title}\n${body}\n${note}</section>`;
}

export function renderHtmlReport(report: HtmlReport): string {
  const cards = report.summary
    .map((entry) => {
      const cls = entry.status ? ` s-${entry.status}` : "";
      const value = typeof entry.value === "number" ? formatNumber(entry.value) : entry.value;
      return `<div class="card"><div class="v${cls}">${escapeHtml(value)}</div><div class="l">${escapeHtml(entry.label)}</div></div>`;
    })
    .join("");
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    // No fetches at all: images only as data: URLs, styles only inline, no scripts.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(report.title)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<h1>${escapeHtml(report.title)}</h1>`,
    report.subtitle ? `<p class="subtitle">${escapeHtml(report.subtitle)}</p>` : "",
    `<div class="summary">${cards}</div>`,
    ...report.sections.map(renderSection),
    "</body></html>",
    "",
  ].join("\n");
}
