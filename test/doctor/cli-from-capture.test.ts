/** `gpuprep doctor --from` on real captures: the report, the exit code, --json and --sarif. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { capturePath } from "./captures.js";
import { RULES } from "../../src/rules/registry.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
/** The escape that starts every ANSI colour sequence. */
const ESC = String.fromCharCode(27);

function doctor(args: string[], env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "gpuprep-doctor-from-"));
  // Colour is decided by the test alone, not by the shell that runs it.
  const base = { ...process.env };
  delete base.NO_COLOR;
  delete base.FORCE_COLOR;
  const result = spawnSync(process.execPath, [CLI, "doctor", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...base, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, cwd };
}

test("a clean capture: header, info findings, exit 0, nothing written", () => {
  const { code, stdout, stderr, cwd } = doctor(["--from", capturePath("debian-torch-cpu")], {
    NO_COLOR: "1",
  });
  assert.equal(stderr, "");
  assert.equal(code, 0);
  assert.match(stdout, /^gpuprep doctor/);
  assert.match(stdout, /torch +1\.13/);
  assert.match(stdout, /Info \(\d+\)/);
  assert.match(stdout, /\[cpu-only-torch\]/);
  assert.doesNotMatch(stdout, new RegExp(ESC + "\\["), "no colour with NO_COLOR");
  assert.deepEqual(readdirSync(cwd), []);
});

test("a broken capture: errors with evidence and fix, exit 1", () => {
  const { code, stdout } = doctor(["--from", capturePath("broken-extensions")]);
  assert.equal(code, 1);
  assert.match(stdout, /Errors \(\d+\)/);
  assert.match(stdout, /\[extension-import-failed\]/);
  assert.match(stdout, /undefined symbol/);
  assert.match(stdout, /fix: /);
  assert.doesNotMatch(stdout, new RegExp(ESC + "\\["), "no colour when stdout is not a TTY");
});

test("FORCE_COLOR colours the report", () => {
  const { stdout } = doctor(["--from", capturePath("broken-extensions")], { FORCE_COLOR: "1" });
  assert.match(stdout, new RegExp(ESC + "\\[31m"));
});

test("--json prints findings, facts and summary; --sarif writes SARIF 2.1.0 with one result per finding", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-sarif-"));
  const sarifFile = join(dir, "doctor.sarif");
  const { code, stdout } = doctor([
    "--from",
    capturePath("broken-extensions"),
    "--json",
    "--sarif",
    sarifFile,
  ]);
  assert.equal(code, 1);
  const report = JSON.parse(stdout) as {
    schema: string;
    schemaVersion: number;
    findings: { ruleId: string; severity: string }[];
    facts: { schema: string };
    summary: { errors: number; exitCode: number };
  };
  assert.equal(report.schema, "gpuprep.doctor");
  // Version 2 since the SDPA switch became `efficient`; the v1 capture is read as version 2.
  assert.equal(report.schemaVersion, 2);
  assert.equal(report.facts.schema, "gpuprep.facts");
  assert.equal((report.facts as { schemaVersion?: number }).schemaVersion, 2);
  assert.equal(report.summary.exitCode, 1);
  assert.equal(report.summary.errors, report.findings.filter((f) => f.severity === "error").length);
  const sarif = JSON.parse(readFileSync(sarifFile, "utf8")) as {
    version: string;
    runs: {
      tool: { driver: { rules: { id: string }[] } };
      results: { ruleId: string; ruleIndex: number }[];
    }[];
  };
  assert.equal(sarif.version, "2.1.0");
  const run = sarif.runs[0];
  assert.ok(run);
  assert.equal(run.tool.driver.rules.length, RULES.length);
  assert.deepEqual(
    run.results.map((r) => r.ruleId),
    report.findings.map((f) => f.ruleId),
  );
  for (const result of run.results) assert.equal(run.tool.driver.rules[result.ruleIndex]?.id, result.ruleId);
});
