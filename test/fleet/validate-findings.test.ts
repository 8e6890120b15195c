/**
 * fleet validate turns each node's validate report into findings through the one verdict table
 * (src/judge/vocabulary.ts): a check doctor's rules judge too keeps the rule's id and page.
 * Input: test/fixtures/validate/report-h100.json (a real H100 run), with the statuses of two
 * items changed here (check.arch to fail, check.cuda-build to warn): the fields named below.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { validationFindings } from "../../src/fleet/validate.js";
import type { ValidateReport } from "../../src/validate/report.js";

const FIXTURE = new URL("../../../test/fixtures/validate/report-h100.json", import.meta.url);

function reportWith(statuses: Record<string, ValidateReport["items"][number]["status"]>): ValidateReport {
  const report = JSON.parse(readFileSync(FIXTURE, "utf8")) as ValidateReport;
  for (const item of report.items) if (item.id in statuses) item.status = statuses[item.id]!;
  return report;
}

test("a healthy H100 report gives no findings", () => {
  assert.deepEqual(validationFindings(reportWith({})), []);
});

test("a shared check keeps the rule's id and page; validate's own check keeps validate's", () => {
  const findings = validationFindings(reportWith({ "check.arch": "fail", "check.cuda-build": "warn" }));
  const arch = findings.find((f) => f.ruleId === "torch-arch-not-covered");
  assert.equal(arch?.severity, "error");
  assert.match(arch?.docs ?? "", /docs\/rules\/torch-arch-not-covered\.md$/);
  const build = findings.find((f) => f.ruleId === "validate/check.cuda-build");
  assert.equal(build?.severity, "warning");
  assert.match(build?.docs ?? "", /docs\/validate\.md$/);
  assert.equal(findings.length, 2);
});
