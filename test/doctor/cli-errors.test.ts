/** `gpuprep doctor` on bad input: one error line plus a hint, exit 2, no stack trace, nothing written. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

function runIn(dir: string, args: string[]) {
  const result = spawnSync(process.execPath, [CLI, "doctor", ...args], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function assertUserError(dir: string, args: string[], pattern: RegExp) {
  const before = readdirSync(dir).sort();
  const { code, stdout, stderr } = runIn(dir, args);
  assert.equal(code, 2, `exit code for ${args.join(" ")}: ${stderr}`);
  assert.equal(stdout, "");
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, `want an error line and a hint, got:\n${stderr}`);
  assert.match(lines[0] ?? "", /^gpuprep: error: /);
  assert.match(lines[0] ?? "", pattern);
  assert.match(lines[1] ?? "", /^ {2}hint: /);
  assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(readdirSync(dir).sort(), before, "nothing written");
}

const dir = mkdtempSync(join(tmpdir(), "gpuprep-doctor-cli-"));
writeFileSync(join(dir, "not-json.json"), "this is not json {");
writeFileSync(join(dir, "other.json"), JSON.stringify({ hello: "world" }));
writeFileSync(join(dir, "old.json"), JSON.stringify({ schema: "gpuprep.facts", schemaVersion: 0 }));
writeFileSync(
  join(dir, "truncated.json"),
  JSON.stringify({ schema: "gpuprep.facts", schemaVersion: 1, tool: { name: "gpuprep" } }),
);

test("unknown flag", () => assertUserError(dir, ["--frobnicate"], /Unknown option '--frobnicate'/));
test("flag missing its value", () => assertUserError(dir, ["--from"], /--from/));
test("unreadable --from path", () =>
  assertUserError(dir, ["--from", join(dir, "missing.json")], /cannot read/));
test("--from a non-JSON file", () =>
  assertUserError(dir, ["--from", join(dir, "not-json.json")], /not valid JSON/));
test("--from a JSON file that is not a snapshot", () =>
  assertUserError(dir, ["--from", join(dir, "other.json")], /not a gpuprep facts snapshot/));
test("--from a snapshot of an old schema version", () =>
  assertUserError(dir, ["--from", join(dir, "old.json")], /schema version 0/));
test("--from a truncated snapshot", () =>
  assertUserError(dir, ["--from", join(dir, "truncated.json")], /does not match the facts schema/));
test("two places at once", () =>
  assertUserError(dir, ["--container", "x", "--ssh", "host"], /cannot be combined/));
test("--save with --from", () =>
  assertUserError(
    dir,
    ["--from", join(dir, "old.json"), "--save", join(dir, "out.json")],
    /--from diagnoses a saved snapshot/,
  ));
test("an interpreter that does not exist", () =>
  assertUserError(dir, ["--python", join(dir, "no-such-python")], /no-such-python/));
test("a project directory that does not exist", () =>
  assertUserError(dir, ["--python", "python3", "--project", join(dir, "no-such-dir")], /does not exist/));
