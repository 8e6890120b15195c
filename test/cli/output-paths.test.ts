/**
 * issue 17: every output path (--save, --sarif, --junit, --html, fleet --save DIR) is checked when
 * the flags are parsed. -v logs every process gpuprep starts, so "no `gpuprep: ran` line" is the
 * proof that nothing ran before the error.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";

const FACTS = fileURLToPath(new URL("../../../test/fixtures/facts/", import.meta.url));
const REPORTS = fileURLToPath(new URL("../../../test/fixtures/validate/", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "gpuprep-output-paths-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const aFile = join(dir, "a-file");
writeFileSync(aFile, "x");
const aDir = join(dir, "a-dir");
mkdirSync(aDir);
const aLink = join(dir, "a-link");
symlinkSync(join(dir, "elsewhere"), aLink);

function assertRefusedBeforeWork(args: string[], path: string, why: RegExp) {
  const before = readdirSync(dir).sort();
  const { code, stdout, stderr } = runCli(["-v", ...args]);
  const command = `gpuprep -v ${args.join(" ")}`;
  assert.equal(code, 2, `${command}: ${stderr}`);
  assert.equal(stdout, "", command);
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, `${command}: one error line and a hint, got:\n${stderr}`);
  assert.ok(lines[0]!.startsWith("gpuprep: error: "), stderr);
  assert.ok(lines[0]!.includes(path), `${command}: the error names ${path}: ${lines[0]}`);
  assert.match(lines[0]!, why, command);
  assert.doesNotMatch(stderr, /gpuprep: ran /, `${command}: something ran before the check`);
  assert.deepEqual(readdirSync(dir).sort(), before, `${command}: nothing written`);
}

function cases(): [string[], string, RegExp][] {
  const python = "/usr/bin/python3";
  return [
    [
      ["validate", "--python", python, "--html", "/nonexistent/r.html"],
      "/nonexistent/r.html",
      /directory \/nonexistent does not exist/,
    ],
    [["validate", "--python", python, "--junit", aDir], aDir, /exists and is not a regular file/],
    [
      ["doctor", "--python", python, "--sarif", "/nonexistent/d.sarif"],
      "/nonexistent/d.sarif",
      /does not exist/,
    ],
    [
      ["doctor", "--python", python, "--save", join(aFile, "facts.json")],
      join(aFile, "facts.json"),
      /is not a directory/,
    ],
    [["doctor", "--python", python, "--sarif", aLink], aLink, /symbolic link/],
    [
      ["memory", "--python", python, "--model", "gpt2", "--html", "/nonexistent/m.html"],
      "/nonexistent/m.html",
      /does not exist/,
    ],
    [
      ["fleet", "doctor", "--from", FACTS, "--html", "/nonexistent/f.html"],
      "/nonexistent/f.html",
      /does not exist/,
    ],
    [
      ["fleet", "doctor", "--from", FACTS, "--junit", join(aFile, "f.xml")],
      join(aFile, "f.xml"),
      /is not a directory/,
    ],
    [["fleet", "doctor", "--from", FACTS, "--save", aFile], aFile, /exists and is not a directory/],
  ];
}

test("an output path that cannot be written fails at once, exit 2, one line naming it, nothing run", () => {
  for (const [args, path, why] of cases()) assertRefusedBeforeWork(args, path, why);
});

test("a writable output path passes the check and is written (validate --from, fleet --save into a new directory)", () => {
  const html = join(dir, "report.html");
  const fromReport = runCli([
    "validate",
    "--from",
    join(REPORTS, "report-debian-torch-cpu.json"),
    "--html",
    html,
  ]);
  assert.ok(fromReport.code === 0 || fromReport.code === 1, fromReport.stderr);
  assert.ok(readdirSync(dir).includes("report.html"));
  const saveDir = join(dir, "new", "snapshots");
  const fleet = runCli([
    "fleet",
    "doctor",
    "--from",
    join(FACTS, "debian-torch-cpu.json"),
    "--save",
    saveDir,
  ]);
  assert.ok(fleet.code === 0 || fleet.code === 1, fleet.stderr);
  assert.ok(readdirSync(saveDir).length > 0, "fleet --save wrote the snapshot");
});
