/** Every row of rule-cases.ts through the merge: the rules it names fire with their severity, or stay silent. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { mergeFleet } from "../../src/fleet/merge.js";
import { FLEET_ROWS } from "./rule-cases.js";
import { SCENARIOS } from "./scenarios.js";

const kb = loadKnowledgeBase();

for (const row of FLEET_ROWS) {
  test(`fleet rules on ${row.scenario}`, () => {
    const make = SCENARIOS[row.scenario];
    assert.ok(make, `no scenario ${row.scenario} in scenarios.ts`);
    const { results, options } = make();
    const report = mergeFleet(results, kb, { transport: "test", mode: "doctor", ...options });
    const found = new Map<string, string[]>();
    for (const f of [...report.fleetFindings, ...report.nodeFindings])
      found.set(f.ruleId, [...(found.get(f.ruleId) ?? []), f.severity]);
    for (const [id, severity] of Object.entries(row.fires))
      assert.ok(
        found.get(id)?.includes(severity),
        `${id} should fire as ${severity} on ${row.scenario}; got ${JSON.stringify(found.get(id) ?? [])}`,
      );
    for (const id of row.silent)
      assert.equal(found.has(id), false, `${id} should stay silent on ${row.scenario}`);
  });
}
