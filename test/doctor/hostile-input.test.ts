/* eslint-disable no-control-regex -- this file is about control characters and escape sequences */
/**
 * Hostile input through the real CLI: a snapshot carrying terminal escapes, JSON that is broken
 * over several lines, a directory, nesting 100,000 deep, and a reader that closes stdout early.
 * Each ends in clean text or one error line plus a hint, never a stack trace or raw escapes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const CAPTURE = fileURLToPath(new URL("../../../test/fixtures/facts/h100-healthy.json", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "gpuprep-hostile-"));

function gpuprep(args: string[], env: Record<string, string | undefined> = { NO_COLOR: "1" }) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Any escape or control character other than newline and tab, and other than our own colours. */
const FOREIGN_CONTROL =
  /\u001b(?!\[(?:1|2|22|31|32|33|34|39)m)|[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f]/;

// The real H100 capture with one field changed: host.os.prettyName gains an OSC title, clear
// screen, cursor home, an 8-bit CSI, a carriage return and DEL.
const hostile = JSON.parse(readFileSync(CAPTURE, "utf8")) as { host: { os: { prettyName: string } } };
hostile.host.os.prettyName = "Ubuntu 24.04.3 LTS\u001b]0;PWNED\u0007\u001b[2J\u001b[H\u009b2J\r\u007f";
const hostilePath = join(dir, "hostile.json");
writeFileSync(hostilePath, JSON.stringify(hostile, null, 1));

test("escape sequences from a snapshot never reach the text report; our colours do", () => {
  for (const env of [{ NO_COLOR: "1" }, { FORCE_COLOR: "1" }]) {
    const { code, stdout, stderr } = gpuprep(["doctor", "--from", hostilePath], env);
    assert.equal(code, 0, stderr);
    const uncoloured = stdout.replace(/\u001b\[\d+m/g, "");
    assert.match(uncoloured, /os {6}Ubuntu 24\.04\.3 LTS2J \(x86_64\)/);
    assert.doesNotMatch(stdout, /PWNED/);
    assert.doesNotMatch(stdout, FOREIGN_CONTROL);
    if (env.FORCE_COLOR) assert.match(stdout, /\u001b\[1m/, "colours kept");
  }
  // --json keeps the value exactly (JSON.stringify escapes it), for tools that read it.
  const json = gpuprep(["doctor", "--from", hostilePath, "--json"]);
  assert.ok(json.stdout.includes("\\u001b]0;PWNED\\u0007"));
  assert.doesNotMatch(json.stdout, /\u001b/);
});

function assertOneLineError(args: string[], pattern: RegExp, forbidden?: RegExp) {
  const { code, stdout, stderr } = gpuprep(args);
  assert.equal(code, 2, `exit code for ${args.join(" ")}: ${stderr}`);
  assert.equal(stdout, "");
  const lines = stderr.trimEnd().split("\n");
  // Under --json a third line is the same error as a gpuprep.error document (message repeated,
  // the input not echoed any more than in the line above it).
  if (args.includes("--json")) {
    const doc = JSON.parse(lines.pop() ?? "") as { schema: string; error: { message: string } };
    assert.equal(doc.schema, "gpuprep.error");
    assert.equal(`gpuprep: error: ${doc.error.message}`, lines[0]);
  }
  assert.equal(lines.length, 2, `want an error line and a hint, got:\n${stderr}`);
  assert.match(lines[0] ?? "", /^gpuprep: error: /);
  assert.match(lines[0] ?? "", pattern);
  assert.match(lines[1] ?? "", /^ {2}hint: /);
  assert.doesNotMatch(stderr, /internal error/);
  assert.doesNotMatch(stderr, FOREIGN_CONTROL);
  if (forbidden) assert.doesNotMatch(stderr, forbidden);
}

test("JSON broken over several lines: one line that does not echo the input", () => {
  const path = join(dir, "multi-line.json");
  writeFileSync(path, '{"schema":\nnonsense\u001b]0;PWNED\u0007\nmore lines\n}\n');
  for (const args of [
    ["doctor", "--from", path],
    ["doctor", "--from", path, "--json"],
    ["fleet", "doctor", "--from", path],
    ["validate", "--from", path],
  ]) {
    assertOneLineError(args, /is not valid JSON/, /nonsense|PWNED|more lines/);
  }
  const late = join(dir, "late-error.json");
  writeFileSync(late, '{\n "schema": "gpuprep.facts",\n "x": [1,\n 2,,\n 3]\n}\n');
  assertOneLineError(["doctor", "--from", late], /is not valid JSON \(unexpected character\)/, /2,,/);
  const cut = join(dir, "cut.json");
  writeFileSync(cut, '{\n "schema": "gpuprep.facts",\n "x": {\n');
  assertOneLineError(
    ["doctor", "--from", cut],
    /is not valid JSON \(a property name expected at line 4, column 1\)/,
  );
  const unquoted = join(dir, "unquoted.json");
  writeFileSync(unquoted, '{\n "schema": "gpuprep.facts",\n x: 1\n}\n');
  assertOneLineError(
    ["doctor", "--from", unquoted],
    /not valid JSON \(a double-quoted property name expected at line 3, column 2\)/,
  );
});

test("a directory given as a snapshot: one line, not an internal error", () => {
  assertOneLineError(["doctor", "--from", dir === "/" ? "/tmp" : tmpdir()], /directory|EISDIR/);
  assertOneLineError(["validate", "--from", tmpdir()], /directory|EISDIR/);
});

test("a snapshot nested 100,000 deep, with and without --json: one line", () => {
  // The real capture again, with the free-form field project.pyproject.uv.sources holding the deep value
  // (no schema check stops it there, so only the nesting cap does).
  const capture = JSON.parse(
    readFileSync(CAPTURE.replace("h100-healthy", "h100-project-pins-torch-2.5.1"), "utf8"),
  ) as { project: { pyproject: { uv: { sources: Record<string, unknown> } } } };
  assert.deepEqual(capture.project.pyproject.uv.sources, {}, "the capture has an empty uv sources table");
  const text = JSON.stringify(capture).replace(
    '"sources":{}',
    `"sources":{"deep":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  );
  assert.ok(text.includes('"deep":[[[['), "the deep value went in");
  const path = join(dir, "deep.json");
  writeFileSync(path, text);
  for (const args of [
    ["doctor", "--from", path, "--json"],
    ["doctor", "--from", path],
    ["fleet", "doctor", "--from", path, "--json"],
    ["validate", "--from", path],
  ]) {
    assertOneLineError(args, /nest/);
  }
});

test("stdout closed early (`scan /usr/lib --all | head -1`): quiet exit, no EPIPE trace", () => {
  const result = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" scan /usr/lib --all | head -1`], {
    encoding: "utf8",
  });
  assert.match(result.stdout, /^gpuprep scan/);
  assert.equal(result.stdout.split("\n").length, 2, "one line through head");
  assert.equal(result.stderr, "");
});
