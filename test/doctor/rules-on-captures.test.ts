/**
 * Every rule's verdict on real captured snapshots. One row per capture: the rules that must fire
 * (with their severity) and some that must stay silent. Adding a capture = one row.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { diagnose } from "../../src/rules/diagnose.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import type { Severity } from "../../src/rules/types.js";
import { CAPTURES_DIR, captureNames, loadCapture } from "./captures.js";

interface Row {
  capture: string;
  /** rule id -> severity of the finding it must return. */
  fires: Record<string, Severity>;
  silent: string[];
}

const ROWS: Row[] = [];

const kb = loadKnowledgeBase();

for (const row of ROWS) {
  test(`rules on capture ${row.capture}`, () => {
    const findings = diagnose(loadCapture(row.capture), kb);
    const fired = new Map(findings.map((f) => [f.ruleId, f.severity]));
    for (const [id, severity] of Object.entries(row.fires)) {
      assert.equal(
        fired.get(id),
        severity,
        `${id} should fire as ${severity}; fired: ${[...fired].join(", ")}`,
      );
    }
    for (const id of row.silent)
      assert.ok(
        !fired.has(id),
        `${id} must not fire: ${JSON.stringify(findings.find((f) => f.ruleId === id)?.message)}`,
      );
    for (const finding of findings) {
      assert.ok(finding.evidence.length > 0, `${finding.ruleId} gives evidence`);
      assert.ok(finding.fix.summary.length > 0, `${finding.ruleId} gives a fix`);
    }
  });
}

test("every capture has a row and a README line saying how it was made", () => {
  const readme = readFileSync(`${CAPTURES_DIR}README.md`, "utf8");
  for (const name of captureNames()) {
    assert.ok(
      ROWS.some((r) => r.capture === name),
      `no row for capture ${name}`,
    );
    assert.ok(readme.includes(`${name}.json`), `README.md does not say how ${name}.json was made`);
  }
});
