/**
 * `doctor --sarif` on real captures, checked two ways:
 *   - against the OASIS SARIF 2.1.0 schema (test/fixtures/sarif, draft-04, through ajv-draft-04);
 *   - against GitHub code scanning's upload requirements, property by property, as documented in
 *     "SARIF support for code scanning":
 *     https://docs.github.com/en/code-security/reference/code-scanning/sarif-files/sarif-support
 *     (source: github/docs content/code-security/reference/code-scanning/sarif-files/sarif-support.md).
 *     The schema allows a result without a location; GitHub does not display one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { capturePath, loadCapture } from "./captures.js";
import { RULES } from "../../src/rules/registry.js";

const require = createRequire(import.meta.url);
const AjvDraft04 = require("ajv-draft-04").default as typeof import("ajv").default;
const addFormats = require("ajv-formats").default as (ajv: unknown) => void;

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const SCHEMA = fileURLToPath(
  new URL("../../../test/fixtures/sarif/sarif-schema-2.1.0.json", import.meta.url),
);
const MANIFEST = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
  repository: { url: string };
};

const ajv = new AjvDraft04({ allErrors: true, strict: false });
addFormats(ajv);
const validateSarif = ajv.compile(JSON.parse(readFileSync(SCHEMA, "utf8")) as object);

interface Region {
  startLine?: number;
  startColumn?: number;
  endLine?: number;
}
interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: { physicalLocation: { artifactLocation: { uri: string }; region: Region } }[];
  partialFingerprints: Record<string, string>;
}
interface SarifRule {
  id: string;
  name?: string;
  helpUri: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  help: { text: string };
  defaultConfiguration?: { level: string };
}
interface SarifLog {
  $schema: string;
  version: string;
  runs: { tool: { driver: { name: string; version: string; rules: SarifRule[] } }; results: SarifResult[] }[];
}

/** Captures with errors, warnings, infos, a venv, a system Python and project manifests. */
const CAPTURES = [
  "broken-extensions",
  "debian-torch-cpu",
  "uv-venv-replaces-torch",
  "h100-project-pins-torch-2.5.1",
  "h100-extension-sm80-only",
  "pixi-pypi-cu124-project",
  "requirements-cu126-pin-project",
];

function sarifFor(capture: string): SarifLog {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-sarif-"));
  try {
    const out = join(dir, "doctor.sarif");
    const result = spawnSync(
      process.execPath,
      [CLI, "doctor", "--from", capturePath(capture), "--sarif", out],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
    assert.ok(result.status === 0 || result.status === 1, `doctor exited ${result.status}: ${result.stderr}`);
    return JSON.parse(readFileSync(out, "utf8")) as SarifLog;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const logs = new Map(CAPTURES.map((capture) => [capture, sarifFor(capture)]));

/** The URL the docs must have, built here from package.json rather than by gpuprep's own function. */
function expectedDocsUrl(ruleId: string): string {
  const repo = MANIFEST.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
  return `${repo}/blob/v${MANIFEST.version}/docs/rules/${ruleId}.md`;
}

test("the captures give results of every severity, so the checks below see each kind", () => {
  const levels = new Set([...logs.values()].flatMap((log) => log.runs[0]!.results.map((r) => r.level)));
  assert.deepEqual([...levels].sort(), ["error", "note", "warning"]);
});

test("every SARIF log validates against the OASIS SARIF 2.1.0 schema", () => {
  for (const [capture, log] of logs) {
    const ok = validateSarif(log);
    assert.ok(ok, `${capture}: ${ajv.errorsText(validateSarif.errors, { separator: "\n" })}`);
  }
});

test("the schema check can fail: a result with a bad level and a region with line 0 are refused", () => {
  const log = structuredClone(logs.get("broken-extensions")!);
  const result = log.runs[0]!.results[0]!;
  result.level = "fatal";
  assert.equal(validateSarif(log), false);
  result.level = "error";
  result.locations[0]!.physicalLocation.region.startLine = 0;
  assert.equal(validateSarif(log), false);
});

test("GitHub code scanning's required properties are all present and non-empty", () => {
  const nonEmpty = (value: unknown, what: string) =>
    assert.ok(typeof value === "string" && value.trim() !== "", `${what} must be a non-empty string`);
  for (const [capture, log] of logs) {
    // sarifLog: $schema, version 2.1.0, runs[].
    nonEmpty(log.$schema, `${capture}: $schema`);
    assert.equal(log.version, "2.1.0");
    assert.ok(Array.isArray(log.runs) && log.runs.length === 1);
    const run = log.runs[0]!;
    // run: tool.driver, results[]; toolComponent: name, rules[].
    nonEmpty(run.tool.driver.name, "tool.driver.name");
    assert.equal(run.tool.driver.rules.length, RULES.length);
    assert.ok(Array.isArray(run.results));
    // reportingDescriptor: id, shortDescription.text, fullDescription.text, help.text; helpUri for the link.
    for (const rule of run.tool.driver.rules) {
      nonEmpty(rule.id, "rule id");
      nonEmpty(rule.shortDescription.text, `${rule.id} shortDescription.text`);
      nonEmpty(rule.fullDescription.text, `${rule.id} fullDescription.text`);
      nonEmpty(rule.help.text, `${rule.id} help.text`);
      assert.ok(rule.shortDescription.text.length <= 1024 && (rule.name ?? "").length <= 255);
      assert.equal(rule.helpUri, expectedDocsUrl(rule.id));
    }
    // result: message.text, locations[] (1 to 10, physicalLocation.artifactLocation.uri and
    // region.startLine), partialFingerprints; ruleId matching a rule GitHub can filter by.
    for (const result of run.results) {
      const where = `${capture} ${result.ruleId}`;
      nonEmpty(result.ruleId, `${where}: ruleId`);
      assert.equal(run.tool.driver.rules[result.ruleIndex]?.id, result.ruleId, `${where}: ruleIndex`);
      nonEmpty(result.message.text, `${where}: message.text`);
      assert.ok(result.locations.length >= 1 && result.locations.length <= 10, `${where}: locations`);
      const physical = result.locations[0]!.physicalLocation;
      nonEmpty(physical.artifactLocation.uri, `${where}: artifactLocation.uri`);
      assert.match(physical.artifactLocation.uri, /^file:\/\/\//, `${where}: an absolute file URI`);
      assert.ok(Number.isInteger(physical.region.startLine) && physical.region.startLine! >= 1, where);
      assert.ok(Number.isInteger(physical.region.startColumn) && physical.region.startColumn! >= 1, where);
      assert.equal(physical.region.endLine, physical.region.startLine, where);
      assert.match(result.partialFingerprints.primaryLocationLineHash ?? "", /^[0-9a-f]{16}:\d+$/, where);
    }
    const fingerprints = run.results.map((r) => r.partialFingerprints.primaryLocationLineHash);
    assert.equal(new Set(fingerprints).size, fingerprints.length, `${capture}: fingerprints collide`);
  }
});

test("a finding about a project manifest points at the manifest and the line its evidence names", () => {
  const facts = loadCapture("uv-venv-replaces-torch");
  const result = logs
    .get("uv-venv-replaces-torch")!
    .runs[0]!.results.find((r) => r.ruleId === "project-replaces-torch");
  assert.ok(result, "the capture has a project-replaces-torch finding");
  const physical = result.locations[0]!.physicalLocation;
  assert.equal(physical.artifactLocation.uri, pathToFileURL(facts.project!.pyproject!.path).href);
  assert.equal(physical.region.startLine, 5, "pyproject.toml:5 is the first line the evidence cites");

  const pins = loadCapture("h100-project-pins-torch-2.5.1");
  const mismatch = logs
    .get("h100-project-pins-torch-2.5.1")!
    .runs[0]!.results.find((r) => r.ruleId === "project-torch-pin-mismatch");
  assert.ok(mismatch);
  assert.equal(
    mismatch.locations[0]!.physicalLocation.artifactLocation.uri,
    pathToFileURL(pins.project!.pyproject!.path).href,
  );
});

test("other findings point at the environment: the venv's prefix, or a system Python's interpreter", () => {
  const venv = loadCapture("uv-venv-replaces-torch");
  assert.equal(venv.python.interpreter.kind, "venv");
  const inVenv = logs
    .get("uv-venv-replaces-torch")!
    .runs[0]!.results.find((r) => r.ruleId === "cpu-only-torch");
  assert.ok(inVenv);
  assert.equal(
    inVenv.locations[0]!.physicalLocation.artifactLocation.uri,
    pathToFileURL(venv.python.interpreter.prefix).href,
  );

  const system = loadCapture("debian-torch-cpu");
  assert.equal(system.python.interpreter.kind, "system");
  const results = logs.get("debian-torch-cpu")!.runs[0]!.results;
  assert.ok(results.length > 0);
  for (const result of results)
    assert.equal(
      result.locations[0]!.physicalLocation.artifactLocation.uri,
      pathToFileURL(system.python.interpreter.executable).href,
      result.ruleId,
    );
});
