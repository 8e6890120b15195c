/** ValidateReport -> text table, HtmlReport and JUnit suites. */
import type { Style } from "./style.js";
import type { HtmlBar, HtmlReport, HtmlSection } from "./html.js";
import type { JUnitSuite } from "./junit.js";
import { SdpaDataSchema } from "../validate/payload.js";
import type { Status, ValidateReport, ValidationItem } from "../validate/report.js";

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
  const s = report.summary;
  lines.push(
    `${s.pass} passed, ${s.warn} warnings, ${s.fail} failed, ${s.skip} skipped, ${s.info} reported (${(report.payload.durationMs / 1000).toFixed(1)} s)`,
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

function sdpaBars(report: ValidateReport): HtmlBar[] {
  const result = report.payload.benchmarks.results.find((r) => r.name === "sdpa" && r.data);
  if (!result) return [];
  const parsed = SdpaDataSchema.safeParse(result.data);
  if (!parsed.success) return [];
  const bars: HtmlBar[] = [];
  for (const c of parsed.data.cases) {
    if (!c.manual?.medianMs) continue;
    const shape = `${c.dtype === "bfloat16" ? "bf16" : "fp16"} S${c.seq} D${c.headDim}`;
    bars.push({
      label: `manual ${shape}`,
      value: 1,
      status: "skip",
      valueText: `1.00x (${c.manual.medianMs.toFixed(2)} ms)`,
    });
    for (const [name, run] of [...Object.entries(c.backends), ["default", c.default] as const]) {
      if (!run || !run.speedup || !run.medianMs) continue;
      bars.push({
        label: `${name} ${shape}`,
        value: run.speedup,
        status: run.ok === false ? "fail" : "pass",
        valueText: `${run.speedup.toFixed(2)}x (${run.medianMs.toFixed(2)} ms)`,
      });
    }
  }
  return bars;
}

export function toHtmlReport(report: ValidateReport): HtmlReport {
  const s = report.summary;
  const peakBars: HtmlBar[] = report.items
    .filter((i) => i.measured && i.reference && i.ratio !== undefined && i.category !== "sdpa")
    .map((i) => ({
      label: i.title,
      value: (i.ratio ?? 0) * 100,
      reference: 100,
      status: i.status,
      valueText: `${figure(i)} (${((i.ratio ?? 0) * 100).toFixed(0)}%)`,
    }));
  const row = (i: ValidationItem) => [{ text: i.status, status: i.status }, i.title, figure(i), i.reason];
  const sections: HtmlSection[] = [
    {
      kind: "bars",
      title: "Achieved vs peak",
      unit: "% of peak",
      bars: peakBars,
      note: [
        report.gpu?.peak
          ? `GPU peaks: ${report.gpu.peak.name} from the knowledge base (${report.gpu.peak.sources.join(", ")}).`
          : "No GPU peak figures in the knowledge base for this GPU: matmul and memory figures are reported without a reference.",
        "Host transfers are held against the PCIe link's raw rate per direction.",
      ].join(" "),
    },
    {
      kind: "bars",
      title: "Attention backends (speedup over manual attention)",
      unit: "x",
      bars: sdpaBars(report),
      note: "Manual attention is softmax(QK^T / sqrt(d)) V with the scores materialised; each backend forced with torch.nn.attention.sdpa_kernel.",
    },
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
  return {
    title: "gpuprep validate",
    subtitle: `${headline(report)}; ${report.createdAt}`,
    summary: [
      { label: "passed", value: s.pass, status: "pass" },
      { label: "warnings", value: s.warn, status: "warn" },
      { label: "failed", value: s.fail, status: "fail" },
      { label: "skipped", value: s.skip, status: "skip" },
      { label: "reported", value: s.info, status: "info" },
      { label: "GPU", value: report.gpu?.name ?? "none" },
      { label: "torch", value: report.torch?.version ?? "n/a" },
    ],
    sections,
  };
}
