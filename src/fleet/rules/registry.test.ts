/**
 * Fleet rule discipline, as src/rules/registry.test.ts keeps doctor's: every module of
 * src/fleet/rules that exports a fleet rule is registered, every registered rule has a page
 * docs/rules/<id>.md whose title and severity are the rule's, and a firing and a silent case in
 * test/fleet/rule-cases.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FLEET_RULES } from "./registry.js";
import { RULES } from "../../rules/registry.js";
import type { FleetRule } from "../rule-kit.js";
import { docsHeader } from "../../rules/registry.test.js";
import { FLEET_ROWS } from "../../../test/fleet/rule-cases.js";

const docsFile = (id: string) => new URL(`../../../../docs/rules/${id}.md`, import.meta.url);
const SOURCES = fileURLToPath(new URL("../../../../src/fleet/rules/", import.meta.url));

test("fleet rule ids are unique, kebab-case, start with fleet- and are not doctor's", () => {
  const ids = FLEET_RULES.map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^fleet(-[a-z0-9]+)+$/);
  const doctor = new Set(RULES.map((r) => r.id));
  assert.deepEqual(
    ids.filter((id) => doctor.has(id)),
    [],
  );
});

test("every fleet rule has a page with symptom, cause and fix, its title and its severity", () => {
  const wrong: string[] = [];
  for (const rule of FLEET_RULES) {
    const file = docsFile(rule.id);
    if (!existsSync(file)) {
      wrong.push(`docs/rules/${rule.id}.md is missing`);
      continue;
    }
    const text = readFileSync(file, "utf8");
    for (const section of ["## Symptom", "## Cause", "## Fix"])
      if (!text.includes(section)) wrong.push(`${rule.id}.md lacks ${section}`);
    const { title, severity } = docsHeader(text);
    if (title !== rule.title)
      wrong.push(`${rule.id}.md: "# ${title}" but the rule's title is "${rule.title}"`);
    if (severity !== rule.severity)
      wrong.push(`${rule.id}.md: severity ${severity} but the rule's is ${rule.severity}`);
  }
  assert.deepEqual(wrong, []);
});

function isFleetRule(value: unknown): value is FleetRule {
  const v = value as Partial<FleetRule> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.id === "string" &&
    typeof v.check === "function" &&
    (v.scope === "fleet" || v.scope === "node")
  );
}

test("every src/fleet/rules module that exports a fleet rule is registered", async () => {
  const registered = new Set(FLEET_RULES.map((r) => r.id));
  const unregistered: string[] = [];
  let exported = 0;
  for (const file of readdirSync(SOURCES).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "registry.ts",
  )) {
    const module = (await import(`./${file.replace(/\.ts$/, ".js")}`)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (!isFleetRule(value)) continue;
      exported++;
      if (!registered.has(value.id))
        unregistered.push(`src/fleet/rules/${file} exports ${name} (${value.id})`);
    }
  }
  assert.deepEqual(unregistered, [], "add them to FLEET_RULES in src/fleet/rules/registry.ts");
  assert.ok(exported >= FLEET_RULES.length);
});

test("every fleet rule has a case where it fires and one where it stays silent, and the cases name only fleet rules", () => {
  const fires = new Set(FLEET_ROWS.flatMap((r) => Object.keys(r.fires)));
  const silent = new Set(FLEET_ROWS.flatMap((r) => r.silent));
  const missing = FLEET_RULES.flatMap((rule) => [
    ...(fires.has(rule.id) ? [] : [`${rule.id}: no case where it fires`]),
    ...(silent.has(rule.id) ? [] : [`${rule.id}: no case where it stays silent`]),
  ]);
  assert.deepEqual(missing, [], "add rows to test/fleet/rule-cases.ts");
  const registered = new Set(FLEET_RULES.map((r) => r.id));
  assert.deepEqual(
    [...fires, ...silent].filter((id) => !registered.has(id)),
    [],
  );
});
