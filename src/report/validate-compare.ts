/** `validate --compare A.json B.json`: text and HtmlReport of a Comparison. */
import type { Style } from "./style.js";
import type { HtmlBar, HtmlReport, HtmlSection, HtmlStatus } from "./html.js";
import {
  NOT_RECORDED,
  SAME_WITHIN,
  direction,
  type ComparedFigure,
  type Comparison,
  type EnvironmentFact,
} from "../validate/compare.js";

function factState(fact: EnvironmentFact): "differs" | "same" | "not recorded in one" {
  if (fact.differs) return "differs";
  return fact.a === NOT_RECORDED || fact.b === NOT_RECORDED ? "not recorded in one" : "same";
}

function formatValue(value: number | null): string {
  if (value === null) return "-";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function ratioText(figure: ComparedFigure): string {
  if (figure.ratio === null) return figure.a === null ? "only in B" : figure.b === null ? "only in A" : "-";
  return `${figure.ratio.toFixed(2)}x`;
}

function statusText(figure: ComparedFigure): string {
  if (figure.statusA === figure.statusB) return figure.statusA ?? "";
  return `${figure.statusA ?? "-"} -> ${figure.statusB ?? "-"}`;
}

function tally(comparison: Comparison): string {
  const counts = { faster: 0, slower: 0, same: 0 };
  for (const figure of comparison.figures) {
    const way = direction(figure);
    if (way) counts[way] += 1;
  }
  const onlyA = comparison.figures.filter((f) => f.b === null).length;
  const onlyB = comparison.figures.filter((f) => f.a === null).length;
  const pct = (SAME_WITHIN * 100).toFixed(0);
  return `${comparison.figures.length} figures: ${counts.faster} higher in B, ${counts.slower} lower, ${counts.same} within ${pct}%; ${onlyA} only in A, ${onlyB} only in B`;
}

function table(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length)));
  return rows.map((row) => `  ${row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join("  ")}`.trimEnd());
}

export function compareText(comparison: Comparison, style: Style): string {
  const { a, b } = comparison;
  const lines = [
    style.bold("gpuprep validate --compare"),
    `  A: ${a.file}  captured ${a.createdAt}  ${a.gpu}`,
    `  B: ${b.file}  captured ${b.createdAt}  ${b.gpu}`,
    "",
    style.bold("Environment"),
    ...table([
      ["", "A", "B", ""],
      ...comparison.environment.map((f) => [
        f.what,
        f.a,
        f.b,
        f.differs ? style.yellow("differs") : style.dim(factState(f)),
      ]),
    ]),
    "",
    style.bold("Figures (ratio B / A; higher is faster for every figure here)"),
    ...table([
      ["figure", "A", "B", "unit", "B / A", "status"],
      ...comparison.figures.map((f) => {
        const way = direction(f);
        const paint = way === "slower" ? style.red : way === "faster" ? style.green : (t: string) => t;
        return [f.title, formatValue(f.a), formatValue(f.b), f.unit, paint(ratioText(f)), statusText(f)];
      }),
    ]),
    "",
    tally(comparison),
  ];
  return lines.join("\n");
}

function ratioStatus(figure: ComparedFigure): HtmlStatus {
  const way = direction(figure);
  return way === "slower" ? "warn" : way === "faster" ? "pass" : "info";
}

export function compareHtml(comparison: Comparison): HtmlReport {
  const { a, b } = comparison;
  const differs = comparison.environment.filter((f) => f.differs).length;
  return {
    title: "gpuprep validate --compare",
    subtitle: `A: ${a.file} (captured ${a.createdAt}, ${a.gpu}); B: ${b.file} (captured ${b.createdAt}, ${b.gpu})`,
    summary: [
      { label: "environment facts differ", value: differs, status: differs ? "warn" : "pass" },
      { label: "figures compared", value: comparison.figures.filter((f) => f.ratio !== null).length },
      { label: "A failed", value: a.summary.fail, status: a.summary.fail ? "fail" : "pass" },
      { label: "B failed", value: b.summary.fail, status: b.summary.fail ? "fail" : "pass" },
    ],
    sections: [environmentTable(comparison), ratioBars(comparison), figuresTable(comparison)],
  };
}

function environmentTable(comparison: Comparison): HtmlSection {
  return {
    kind: "table",
    title: "Environment",
    columns: ["", "A", "B", ""],
    rows: comparison.environment.map((f) => [
      f.what,
      f.a,
      f.b,
      { text: factState(f), status: f.differs ? "warn" : "skip" },
    ]),
  };
}

/** B / A for each figure both reports have, against the B = A mark. */
function ratioBars(comparison: Comparison): HtmlSection {
  const bars: HtmlBar[] = comparison.figures
    .filter((f) => f.ratio !== null)
    .map((f) => ({
      label: f.title,
      value: f.ratio ?? 0,
      status: ratioStatus(f),
      valueText: `${ratioText(f)} (${formatValue(f.a)} -> ${formatValue(f.b)} ${f.unit})`,
      marks: [{ value: 1, label: "B = A" }],
    }));
  return {
    kind: "bars",
    title: "B / A for each figure",
    unit: "x",
    bars,
    legend: [
      {
        kind: "bar",
        status: "pass",
        label: `higher in B (by more than ${(SAME_WITHIN * 100).toFixed(0)}%)`,
      },
      { kind: "bar", status: "warn", label: "lower in B" },
      { kind: "bar", status: "info", label: "the same within noise" },
      { kind: "mark", label: "B = A" },
    ],
    note: "Every figure here is a throughput or a speedup: higher is faster. Both reports were judged again with this gpuprep's knowledge base.",
  };
}

function figuresTable(comparison: Comparison): HtmlSection {
  return {
    kind: "table",
    title: "Figures",
    columns: ["figure", "A", "B", "unit", "B / A", "status A -> B"],
    rows: comparison.figures.map((f) => [
      f.title,
      formatValue(f.a),
      formatValue(f.b),
      f.unit,
      { text: ratioText(f), status: f.ratio === null ? "skip" : ratioStatus(f) },
      statusText(f),
    ]),
    note: tally(comparison),
  };
}
