/**
 * Every rule's verdict on real captured snapshots and derived cases: runs each row of
 * rule-cases.ts (the table, documented there) through diagnose().
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { ROWS } from "./rule-cases.js";
import { CAPTURES_DIR, DERIVED, captureNames, loadCapture } from "./captures.js";

const kb = loadKnowledgeBase();

for (const row of ROWS) {
  test(`rules on capture ${row.capture}`, () => {
    const facts = DERIVED[row.capture]?.() ?? loadCapture(row.capture);
    const findings = diagnose(facts, kb);
    const fired = new Set(findings.map((f) => `${f.ruleId}:${f.severity}`));
    for (const [id, severity] of Object.entries(row.fires)) {
      assert.ok(
        fired.has(`${id}:${severity}`),
        `${id} should fire as ${severity}; fired: ${[...fired].join(", ")}`,
      );
    }
    for (const id of row.silent) {
      const finding = findings.find((f) => f.ruleId === id);
      assert.equal(finding, undefined, `${id} must not fire: ${finding?.message}`);
    }
    for (const finding of findings) {
      assert.ok(finding.evidence.length > 0, `${finding.ruleId} gives evidence`);
      assert.ok(finding.fix.summary.length > 0, `${finding.ruleId} gives a fix`);
    }
  });
}

test("every capture and derived case has a row and a README line saying how it was made", () => {
  const readme = readFileSync(`${CAPTURES_DIR}README.md`, "utf8");
  for (const name of Object.keys(DERIVED))
    assert.ok(readme.includes(`${name}:`), `README.md does not say what the derived case ${name} changes`);
  for (const name of [...captureNames(), ...Object.keys(DERIVED)]) {
    assert.ok(
      ROWS.some((r) => r.capture === name),
      `no row for capture ${name}`,
    );
    if (!(name in DERIVED))
      assert.ok(readme.includes(`${name}.json`), `README.md does not say how ${name}.json was made`);
  }
});
