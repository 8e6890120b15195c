/** `gpuprep doctor` on bad input: one error line plus a hint, exit 2, no stack trace, nothing written. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

function runIn(dir: string, args: string[]) {
  const result = spawnSync(process.execPath, [CLI, "doctor", ...args], {
    cwd: dir,
    encoding: "utf8",
    timeout: 20_000, // a hang (a FIFO read) ends as status null, which fails the exit-code check
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

// Issue 12: reads that used to hang or flood memory; each is now refused at once.
const special = mkdtempSync(join(tmpdir(), "gpuprep-doctor-special-"));
execFileSync("mkfifo", [join(special, "fifo.json")]);
symlinkSync("/dev/zero", join(special, "zero.json"));
mkdirSync(join(special, "dir.json"));
test("--from a FIFO returns at once", () =>
  assertUserError(special, ["--from", "fifo.json"], /it is a FIFO/));
test("--from a link to /dev/zero", () => assertUserError(special, ["--from", "zero.json"], /it is a device/));
test("--from a directory (was an internal error)", () =>
  assertUserError(special, ["--from", "dir.json"], /it is a directory/));

test("--sarif through a symbolic link is refused, the link's target untouched", () => {
  const work = mkdtempSync(join(tmpdir(), "gpuprep-doctor-sarif-"));
  const snapshot = fileURLToPath(new URL("../../../test/fixtures/facts/h100-healthy.json", import.meta.url));
  writeFileSync(join(work, "victim"), "precious\n");
  symlinkSync(join(work, "victim"), join(work, "out.sarif"));
  const { code, stderr } = runIn(work, ["--from", snapshot, "--sarif", "out.sarif"]);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /out\.sarif: is a symbolic link/);
  assert.equal(readFileSync(join(work, "victim"), "utf8"), "precious\n");
});
