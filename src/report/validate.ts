/** ValidateReport -> text table, HtmlReport and JUnit suites. */
import type { z } from "zod";
import type { Style } from "./style.js";
import type { HtmlBar, HtmlLegendEntry, HtmlReport, HtmlSection } from "./html.js";
import { jitRows } from "../validate/judge-jit.js";
import type { JUnitSuite } from "./junit.js";
import { SdpaDataSchema } from "../validate/payload.js";
import type { Status, ValidateReport, ValidationItem } from "../validate/report.js";
import { sourceText } from "../kb/source-label.js";

function figure(item: ValidationItem): string {
  if (!item.measured) return "";
  const value = formatValue(item.measured.value);
  const ref = item.reference ? ` / ${formatValue(item.reference.value)}` : "";
  return `${value}${ref} ${item.measured.unit}`;
}

function formatValue(value: number): string {
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function headline(report: ValidateReport): string {
  const gpu = report.gpu
    ? `${report.gpu.name} (sm_${report.gpu.computeCapability.replace(".", "")})${report.gpu.peak ? "" : ", no peak figures in the knowledge base"}`
    : "no GPU visible";
  const torch = report.torch
    ? `torch ${report.torch.version}${report.torch.cuda ? ` CUDA ${report.torch.cuda}` : " CPU-only"}`
    : "torch not importable";
  return `${gpu}; ${torch}; Python ${report.python.version} (${report.python.executable}, ${report.transport})`;
}

/**
 * Where doctor judges the same condition and found something: its rule id, as doctor prints it,
 * and the rule's page. A pass or skip names no rule: the id names the problem.
 */
function sharedRule(item: ValidationItem): string {
  if (!item.ruleId || item.status === "pass" || item.status === "skip") return "";
  return ` [${item.ruleId}]${item.docs ? ` ${item.docs}` : ""}`;
}

/** "bf16 GEMM  yes  ran  710 TFLOP/s  72%": the feature matrix as rows of cells. */
function featureRows(report: ValidateReport): string[][] {
  return (report.featureMatrix ?? []).map((cell) => [
    cell.feature,
    cell.arch === "not-on-arch" ? "not on this architecture" : cell.arch === "yes" ? "yes" : "no figure",
    cell.available === null ? "-" : cell.available ? "yes" : "no",
    cell.ran ? (cell.ok === false ? "wrong result" : "ran") : "not run",
    cell.measured ? `${formatValue(cell.measured.value)} ${cell.measured.unit}` : "",
    cell.ratio !== undefined ? `${(cell.ratio * 100).toFixed(0)}% of ${formatValue(cell.peak ?? 0)}` : "",
    cell.note,
  ]);
}

/** Items that carry the kernels their operation ran: title, backend, busiest kernel. */
function provenanceRows(report: ValidateReport): string[][] {
  return report.items
    .filter((i) => i.provenance)
    .map((i) => [i.title, i.provenance?.backend ?? "", (i.provenance?.kernels ?? []).join(" | ")]);
}

/** Each JIT smoke: first call with and without driver JIT, and the verdict. */
function jitTableRows(report: ValidateReport): string[][] {
  const ms = (smoke: { ok: boolean; firstCallMs?: number | null; error?: string | null } | null) =>
    !smoke ? "not run" : `${smoke.ok ? "ok" : "FAILED"} ${smoke.firstCallMs?.toFixed(1) ?? "?"} ms`;
  return jitRows(report.payload).map((row) => [
    row.name,
    row.what,
    ms(row.normal),
    ms(row.noJit),
    row.verdict,
  ]);
}

function textTable(rows: string[][], header: string[], width = 60): string[] {
  const all = [header, ...rows].map((row) =>
    row.map((cell) => (cell.length > width ? `${cell.slice(0, width - 1)}~` : cell)),
  );
  const widths = header.map((_, c) => Math.max(...all.map((row) => (row[c] ?? "").length)));
  return all.map((row) => `  ${row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join("  ")}`.trimEnd());
}

function extraSections(report: ValidateReport, style: Style): string[] {
  const lines: string[] = [];
  const features = featureRows(report);
  if (features.length > 0) {
    lines.push(style.bold("Feature matrix (architecture from the knowledge base)"));
    lines.push(
      ...textTable(
        features,
        ["feature", "architecture", "in torch", "run", "measured", "of dense peak", "note"],
        48,
      ),
    );
    lines.push("");
  }
  const kernels = provenanceRows(report);
  if (kernels.length > 0) {
    lines.push(style.bold("Kernel provenance (torch.profiler)"));
    lines.push(...textTable(kernels, ["operation", "backend", "kernels, busiest first"], 90));
    lines.push("");
  }
  const jit = jitTableRows(report);
  if (jit.length > 0) {
    lines.push(style.bold("JIT check: first call with driver JIT / with CUDA_DISABLE_PTX_JIT=1"));
    lines.push(...textTable(jit, ["call", "library", "with JIT", "without JIT", "verdict"]));
    lines.push("");
  }
  return lines;
}

export function renderText(report: ValidateReport, style: Style): string {
  const paint: Record<Status, (t: string) => string> = {
    pass: style.green,
    warn: style.yellow,
    fail: style.red,
    skip: style.dim,
    info: style.blue,
  };
  const lines = [style.bold(`gpuprep validate: ${headline(report)}`), ""];
  for (const group of ["check", "benchmark"] as const) {
    const items = report.items.filter((i) => i.group === group);
    if (items.length === 0) continue;
    lines.push(style.bold(group === "check" ? "Checks" : "Benchmarks"));
    const titleWidth = Math.min(44, Math.max(...items.map((i) => i.title.length)));
    const figureWidth = Math.max(0, ...items.map((i) => figure(i).length));
    for (const i of items) {
      const status = paint[i.status](i.status.toUpperCase().padEnd(4));
      const fig = figureWidth ? `${figure(i).padEnd(figureWidth)}  ` : "";
      lines.push(`  ${status}  ${i.title.padEnd(titleWidth)}  ${fig}${style.dim(i.reason)}${sharedRule(i)}`);
    }
    lines.push("");
  }
  lines.push(...extraSections(report, style));
  const s = report.summary;
  lines.push(
    `${s.pass} passed, ${s.warn} warnings, ${s.fail} failed, ${s.skip} skipped, ${s.info} reported (${(report.payload.durationMs / 1000).toFixed(1)} s; captured ${report.createdAt}${report.judgedAt ? `, judged ${report.judgedAt}` : ""})`,
  );
  return lines.join("\n");
}

export function toJUnitSuites(report: ValidateReport): JUnitSuite[] {
  return (["check", "benchmark"] as const).map((group) => ({
    name: `gpuprep.validate.${group}s`,
    cases: report.items
      .filter((i) => i.group === group)
      .map((i) => ({
        name: i.title,
        classname: `gpuprep.validate.${i.category}`,
        status: i.status === "fail" ? "fail" : i.status === "skip" ? "skip" : "pass",
        message: i.reason,
        details: i.status === "warn" ? `WARNING: ${i.reason}` : i.reason,
      })),
  }));
}

/**
 * One bar per backend and shape. The judged one (sdpa.fused: the best fused backend at the
 * largest bf16 shape) has its verdict's colour and the least speedup drawn across it; the others
 * are shown, not judged (blue), and a wrong result is red wherever it is.
 */
type SdpaCase = z.infer<typeof SdpaDataSchema>["cases"][number];

/** The shape and backend the fused-backend verdict judged, read back from its reason. */
interface JudgedSdpa {
  item: ValidationItem;
  backend: string;
  dtype: string;
  /** "BxHxSxD" */
  shape: string;
}

function judgedSdpa(report: ValidateReport): JudgedSdpa | null {
  const item = report.items.find((i) => i.id === "bench.sdpa.fused");
  const judged = /best: (\w+) [\d.]+x over manual attention at (\S+) B(\d+) H(\d+) S(\d+) D(\d+)/.exec(
    item?.reason ?? "",
  );
  if (!item || !judged) return null;
  return {
    item,
    backend: judged[1] ?? "",
    dtype: judged[2] ?? "",
    shape: `${judged[3]}x${judged[4]}x${judged[5]}x${judged[6]}`,
  };
}

function sdpaBars(report: ValidateReport): HtmlBar[] {
  const result = report.payload.benchmarks.results.find((r) => r.name === "sdpa" && r.data);
  if (!result) return [];
  const parsed = SdpaDataSchema.safeParse(result.data);
  if (!parsed.success) return [];
  const judged = judgedSdpa(report);
  return parsed.data.cases.flatMap((c) => (c.manual?.medianMs ? caseBars(c, c.manual.medianMs, judged) : []));
}

/** Manual attention at 1x, then each backend's and the default call's speedup over it. */
function caseBars(c: SdpaCase, manualMs: number, judged: JudgedSdpa | null): HtmlBar[] {
  const dtype = c.dtype === "bfloat16" ? "bf16" : c.dtype === "float16" ? "fp16" : c.dtype;
  const shape = `${dtype} S${c.seq} D${c.headDim}`;
  const thisShape =
    judged !== null &&
    judged.dtype === c.dtype &&
    judged.shape === `${c.batch}x${c.heads}x${c.seq}x${c.headDim}`;
  const bars: HtmlBar[] = [
    { label: `manual ${shape}`, value: 1, status: "skip", valueText: `1.00x (${manualMs.toFixed(2)} ms)` },
  ];
  for (const [name, run] of [...Object.entries(c.backends), ["default", c.default] as const]) {
    if (!run || !run.speedup || !run.medianMs) continue;
    const fused = thisShape && judged.backend === name ? judged.item : null;
    bars.push(
      backendBar(`${name} ${shape}`, { speedup: run.speedup, medianMs: run.medianMs, ok: run.ok }, fused),
    );
  }
  return bars;
}

/** A backend's speedup; the judged one carries the verdict's status and its limits as marks. */
function backendBar(
  label: string,
  run: { speedup: number; medianMs: number; ok?: boolean | null },
  fused: ValidationItem | null,
): HtmlBar {
  const bar: HtmlBar = {
    label,
    value: run.speedup,
    status: run.ok === false ? "fail" : fused ? fused.status : "info",
    valueText: `${run.speedup.toFixed(2)}x (${run.medianMs.toFixed(2)} ms)${fused ? " judged" : ""}`,
  };
  if (fused?.reference)
    bar.marks = [
      { value: fused.reference.value, label: `pass from ${fused.reference.value}x manual` },
      { value: 1, label: "warn from 1x manual" },
    ];
  return bar;
}

const JUDGED_LEGEND: HtmlLegendEntry[] = [
  { kind: "bar", status: "pass", label: "judged: pass" },
  { kind: "bar", status: "warn", label: "judged: warn" },
  { kind: "bar", status: "fail", label: "judged: fail" },
  { kind: "bar", status: "info", label: "shown, not judged" },
];

function peakBar(i: ValidationItem): HtmlBar {
  const bar: HtmlBar = {
    label: i.title,
    value: (i.ratio ?? 0) * 100,
    reference: 100,
    status: i.limits ? i.status : "info",
    valueText: `${figure(i)} (${((i.ratio ?? 0) * 100).toFixed(0)}%)`,
  };
  // A limit of 0 (the feature matrix never fails on speed) has no line to draw.
  if (i.limits)
    bar.marks = [
      { value: i.limits.pass * 100, label: `pass from ${(i.limits.pass * 100).toFixed(0)}%` },
      { value: i.limits.warn * 100, label: `warn from ${(i.limits.warn * 100).toFixed(0)}%` },
    ].filter((mark) => mark.value > 0);
  return bar;
}

/** Each figure that has a peak, as a share of it (SDPA's speedups have their own section). */
function peakSection(report: ValidateReport): HtmlSection {
  return {
    kind: "bars",
    title: "Achieved vs peak",
    unit: "% of peak",
    bars: report.items
      .filter((i) => i.measured && i.reference && i.ratio !== undefined && i.category !== "sdpa")
      .map(peakBar),
    legend: [
      ...JUDGED_LEGEND,
      { kind: "reference", label: "the peak (100%)" },
      { kind: "mark", label: "each judged bar's pass and warn limits" },
    ],
    note: [
      report.gpu?.peak
        ? `GPU peaks: ${report.gpu.peak.name} from the knowledge base (${report.gpu.peak.sources.map(sourceText).join("; ")}).`
        : "No GPU peak figures in the knowledge base for this GPU: matmul and memory figures are reported without a reference.",
      "Host transfers are held against the PCIe link's raw rate per direction.",
    ].join(" "),
  };
}

function sdpaSection(report: ValidateReport): HtmlSection {
  return {
    kind: "bars",
    title: "Attention backends (speedup over manual attention)",
    unit: "x",
    bars: sdpaBars(report),
    legend: [
      ...JUDGED_LEGEND,
      { kind: "bar", status: "skip", label: "manual attention (1x)" },
      { kind: "mark", label: "the judged bar's limits (least speedup for this GPU; 1x)" },
    ],
    note: "Manual attention is softmax(QK^T / sqrt(d)) V with the scores materialised; each backend forced with torch.nn.attention.sdpa_kernel. Judged: the best fused backend at the largest bf16 shape.",
  };
}

/** Every check, then every benchmark with its figure. */
function itemTables(report: ValidateReport): HtmlSection[] {
  const row = (i: ValidationItem) => [{ text: i.status, status: i.status }, i.title, figure(i), i.reason];
  return [
    {
      kind: "table",
      title: "Checks",
      columns: ["status", "check", "evidence"],
      rows: report.items
        .filter((i) => i.group === "check")
        .map((i) => [{ text: i.status, status: i.status }, i.title, i.reason]),
    },
    {
      kind: "table",
      title: "Benchmarks",
      columns: ["status", "benchmark", "measured / reference", "evidence"],
      rows: report.items.filter((i) => i.group === "benchmark").map(row),
    },
  ];
}

export function toHtmlReport(report: ValidateReport): HtmlReport {
  const s = report.summary;
  return {
    title: "gpuprep validate",
    subtitle: `${headline(report)}; captured ${report.createdAt}${report.judgedAt ? `, judged again ${report.judgedAt}` : ""}`,
    summary: [
      { label: "passed", value: s.pass, status: "pass" },
      { label: "warnings", value: s.warn, status: "warn" },
      { label: "failed", value: s.fail, status: "fail" },
      { label: "skipped", value: s.skip, status: "skip" },
      { label: "reported", value: s.info, status: "info" },
      { label: "GPU", value: report.gpu?.name ?? "none" },
      { label: "torch", value: report.torch?.version ?? "n/a" },
    ],
    sections: [peakSection(report), sdpaSection(report), ...optionalTables(report), ...itemTables(report)],
  };
}

/** The feature matrix, kernel provenance and JIT tables, where the run has them. */
function optionalTables(report: ValidateReport): HtmlSection[] {
  const sections: HtmlSection[] = [];
  const features = featureRows(report);
  if (features.length > 0)
    sections.push({
      kind: "table",
      title: "Feature matrix",
      columns: [
        "feature",
        "architecture (knowledge base)",
        "in this torch",
        "run",
        "measured",
        "of dense peak",
        "note",
      ],
      rows: features,
      note: "\"not on this architecture\" comes from the knowledge base's GPU row (NVIDIA's datasheets and architecture whitepapers), never from a failed call: such a format is not called.",
    });
  const kernels = provenanceRows(report);
  if (kernels.length > 0)
    sections.push({
      kind: "table",
      title: "Kernel provenance",
      columns: ["operation", "backend", "kernels (torch.profiler), busiest first"],
      rows: kernels,
      note: "SDPA: flash, cudnn, efficient or math; GEMM: cuBLAS, cuBLASLt or CUTLASS, read from the kernel names (src/validate/provenance.ts).",
    });
  const jit = jitTableRows(report);
  if (jit.length > 0)
    sections.push({
      kind: "table",
      title: "JIT check",
      columns: ["call", "library", "with driver JIT", "with CUDA_DISABLE_PTX_JIT=1", "verdict"],
      rows: jit,
      note: "Both children run with CUDA_CACHE_DISABLE=1, so a first call pays the compile a fresh machine pays. native: ran both ways; jit-dependent: ran only through the driver's JIT of PTX.",
    });
  return sections;
}
