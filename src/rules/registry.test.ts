import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { RULES } from "./registry.js";

const docsFile = (id: string) => new URL(`../../../docs/rules/${id}.md`, import.meta.url);

test("the registry holds at least 20 rules with unique kebab-case ids", () => {
  assert.ok(RULES.length >= 20, `only ${RULES.length} rules`);
  const ids = RULES.map((r) => r.id);
  assert.equal(
    new Set(ids).size,
    ids.length,
    `duplicate ids: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(", ")}`,
  );
  for (const id of ids) assert.match(id, /^[a-z0-9]+(-[a-z0-9]+)*$/);
});

test("every registered rule has a docs page with symptom, cause and fix", () => {
  for (const rule of RULES) {
    const file = docsFile(rule.id);
    assert.ok(existsSync(file), `docs/rules/${rule.id}.md is missing`);
    const text = readFileSync(file, "utf8");
    for (const section of ["## Symptom", "## Cause", "## Fix"])
      assert.ok(text.includes(section), `${rule.id}.md lacks ${section}`);
  }
});
