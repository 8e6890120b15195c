/**
 * Rule discipline, the way ESLint keeps it (Makefile.js checkRuleFiles, RuleTester's valid and
 * invalid lists): every rule module is registered, every registered rule has a docs page that
 * agrees with the code, and a case where it fires and one where it stays silent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RULES } from "./registry.js";
import type { Rule } from "../findings/types.js";
import { ROWS } from "../../test/doctor/rule-cases.js";

const docsFile = (id: string) => new URL(`../../../docs/rules/${id}.md`, import.meta.url);
/** The sources, not dist/: a module must be registered even if nothing imports it yet. */
const SOURCES = fileURLToPath(new URL("../../../src/rules/", import.meta.url));

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

/** What a docs page says the rule is: its first "# " heading and its "**Severity:** x" line. */
export function docsHeader(text: string): { title: string | null; severity: string | null } {
  const lines = text.split("\n");
  const title =
    lines
      .find((l) => l.startsWith("# "))
      ?.slice(2)
      .trim() ?? null;
  const severity = lines.map((l) => /^\*\*Severity:\*\* (\w+)/.exec(l)?.[1]).find(Boolean) ?? null;
  return { title, severity };
}

test("every docs page's title and severity equal the rule's", () => {
  const wrong: string[] = [];
  for (const rule of RULES) {
    const file = docsFile(rule.id);
    if (!existsSync(file)) continue; // reported by the test above
    const { title, severity } = docsHeader(readFileSync(file, "utf8"));
    if (title !== rule.title)
      wrong.push(`${rule.id}.md: "# ${title}" but the rule's title is "${rule.title}"`);
    if (severity !== rule.severity)
      wrong.push(`${rule.id}.md: "**Severity:** ${severity}" but the rule's severity is ${rule.severity}`);
  }
  assert.deepEqual(wrong, []);
});

test("the docs check reads a heading and a severity, and sees a drifted one", () => {
  const page = "# An installed extension fails to import\n\n**Severity:** error (warning for a hang).\n";
  assert.deepEqual(docsHeader(page), { title: "An installed extension fails to import", severity: "error" });
  assert.deepEqual(docsHeader("# x: y\n\nSeverity: error.\n"), { title: "x: y", severity: null });
});

function isRule(value: unknown): value is Rule {
  const v = value as Partial<Rule> | null;
  return typeof v === "object" && v !== null && typeof v.id === "string" && typeof v.check === "function";
}

/** The one module of src/rules that is not a rule: the list of them. */
const RULE_CONTRACT = new Set(["registry.ts"]);

test("every src/rules module that exports a Rule is registered in RULES", async () => {
  const registered = new Set(RULES.map((r) => r.id));
  const modules = readdirSync(SOURCES).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  assert.ok(modules.length >= RULES.length, `found only ${modules.length} modules in ${SOURCES}`);
  const unregistered: string[] = [];
  const notRules: string[] = [];
  let exported = 0;
  for (const file of modules) {
    const module = (await import(`./${file.replace(/\.ts$/, ".js")}`)) as Record<string, unknown>;
    const rules = Object.entries(module).filter(([, value]) => isRule(value));
    // src/rules holds only rules (issue 16): what they share lives in src/rule-helpers.
    if (rules.length === 0 && !RULE_CONTRACT.has(file)) notRules.push(`src/rules/${file}`);
    for (const [name, value] of rules) {
      exported++;
      if (!registered.has((value as Rule).id))
        unregistered.push(`src/rules/${file} exports ${name} (${(value as Rule).id})`);
    }
  }
  assert.deepEqual(unregistered, [], "import these in src/rules/registry.ts and add them to RULES");
  assert.deepEqual(notRules, [], "modules without a rule belong in src/rule-helpers");
  assert.ok(exported >= RULES.length, `saw ${exported} exported rules for ${RULES.length} registered`);
});

/** Rule ids with a case where they fire, and with one where they are asserted silent. */
export function ruleCoverage(rows: typeof ROWS): { fires: Set<string>; silent: Set<string> } {
  return {
    fires: new Set(rows.flatMap((r) => Object.keys(r.fires))),
    silent: new Set(rows.flatMap((r) => r.silent)),
  };
}

test("every registered rule has a case where it fires and one where it stays silent", () => {
  const { fires, silent } = ruleCoverage(ROWS);
  const missing = RULES.flatMap((rule) => [
    ...(fires.has(rule.id) ? [] : [`${rule.id}: no case where it fires`]),
    ...(silent.has(rule.id) ? [] : [`${rule.id}: no case where it stays silent`]),
  ]);
  assert.deepEqual(missing, [], "add rows to test/doctor/rule-cases.ts");
});

test("the rule cases name only registered rules", () => {
  const registered = new Set(RULES.map((r) => r.id));
  const { fires, silent } = ruleCoverage(ROWS);
  assert.deepEqual([...fires, ...silent].filter((id) => !registered.has(id)).sort(), []);
});

test("the coverage check sees a rule without a firing case", () => {
  const { fires, silent } = ruleCoverage([{ capture: "x", fires: { a: "error" }, silent: ["a", "b"] }]);
  assert.ok(fires.has("a") && !fires.has("b"));
  assert.ok(silent.has("b"));
});
