// Scores doctor reports made elsewhere (bench/device/diagnosis.sh on a GPU machine) the way
// run.mjs scores its own: one JSON line per case in CASES_FILE ({id, catalog, expect, minSeverity,
// accept, how}), and REPORTS_DIR/<id>.json holding that case's `doctor --json` output.
// Usage: node bench/diagnosis/score-reports.mjs CASES_FILE REPORTS_DIR --out FILE
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderTable, scoreCase, summarize } from "./score.mjs";

const [casesFile, reportsDir, flag, out] = process.argv.slice(2);
if (!casesFile || !reportsDir || flag !== "--out" || !out) {
  console.error(
    "score-reports: usage: node bench/diagnosis/score-reports.mjs CASES_FILE REPORTS_DIR --out FILE",
  );
  process.exit(2);
}

const cases = readFileSync(casesFile, "utf8")
  .split("\n")
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line));

const results = cases.map((testCase) => {
  const row = {
    id: testCase.id,
    catalog: testCase.catalog ?? null,
    expect: testCase.expect ?? null,
    minSeverity: testCase.expect ? (testCase.minSeverity ?? "warning") : null,
    accept: testCase.accept ?? [],
    kind: "device",
    how: testCase.how,
  };
  const path = join(reportsDir, `${testCase.id}.json`);
  let report = null;
  try {
    report = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : null;
  } catch {
    report = null;
  }
  if (!report?.findings) {
    const error = `no doctor report at ${path}`;
    return {
      ...row,
      error,
      hit: row.expect ? false : null,
      top: false,
      findings: [],
      extras: [],
      falseAlarms: [],
    };
  }
  const findings = report.findings.map((f) => ({ ruleId: f.ruleId, severity: f.severity }));
  return { ...row, ...scoreCase(testCase, findings), exitCode: report.summary?.exitCode ?? null, findings };
});

const summary = summarize(results);
console.log(renderTable(results, summary));
const version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
const document = {
  schema: "gpuprep.bench.diagnosis",
  schemaVersion: 1,
  tool: { name: "gpuprep", version },
  ranAt: new Date().toISOString(),
  command: `node bench/diagnosis/score-reports.mjs ${process.argv.slice(2).join(" ")}`,
  summary,
  cases: results,
};
writeFileSync(out, JSON.stringify(document, null, 2) + "\n");
console.log(`wrote ${out}`);
