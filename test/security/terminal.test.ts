/* eslint-disable no-control-regex -- this file is about control characters and escape sequences */
/**
 * Text output is stripped of every escape sequence and bidi control, terminal or not, and our own
 * colours are added after that pass (issue 28 low: the snapshot fuzzer put colour escapes into
 * doctor's text with stdout not a terminal, because the sanitizer let "our" SGR codes through
 * wherever they came from; U+202E passed). The real CLI on the real H100 capture.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";
import { sanitizeForTerminal } from "../../src/report/terminal.js";
import { colourTokensToEscapes, makeStyle } from "../../src/report/style.js";

const CAPTURE = fileURLToPath(new URL("../../../test/fixtures/facts/h100-healthy.json", import.meta.url));
const BIDI = [
  "\u061c",
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
];

function hostileSnapshot(prettyName: string): string {
  const facts = JSON.parse(readFileSync(CAPTURE, "utf8")) as { host: { os: { prettyName: string } } };
  facts.host.os.prettyName = prettyName;
  const path = join(mkdtempSync(join(tmpdir(), "gpuprep-terminal-")), "snapshot.json");
  writeFileSync(path, JSON.stringify(facts));
  return path;
}

test("not a terminal: no escape of any kind, not even the colours we use, and no bidi control", () => {
  const path = hostileSnapshot(`\u001b[31mRED\u001b[39m \u001b[1mBOLD\u001b[22m ${BIDI.join("")}exe.txt`);
  const result = runCli(["doctor", "--from", path], { env: { NO_COLOR: "" } });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /RED BOLD exe\.txt/);
  assert.doesNotMatch(result.stdout, /\u001b/);
  for (const control of BIDI)
    assert.ok(!result.stdout.includes(control), `U+${control.charCodeAt(0).toString(16)}`);
});

test("colours on: ours are there, the snapshot's colour codes are not", () => {
  const path = hostileSnapshot("\u001b[31mRED\u001b[39m\u202egnp.exe");
  const result = runCli(["doctor", "--from", path], { env: { FORCE_COLOR: "1", NO_COLOR: "" } });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /\u001b\[1mgpuprep doctor/, "our bold title");
  assert.match(result.stdout, /REDgnp\.exe/);
  assert.doesNotMatch(result.stdout, /\u001b\[31mRED/);
  assert.ok(!result.stdout.includes("\u202e"));
});

test("a colour token cannot be forged: only the process's own key becomes an escape", () => {
  const ours = makeStyle(true).red("x");
  assert.equal(colourTokensToEscapes(sanitizeForTerminal(ours)), "\u001b[31mx\u001b[39m");
  const forged = ours.replace(/[0-9a-f]{16}/g, "0000000000000000");
  assert.doesNotMatch(colourTokensToEscapes(sanitizeForTerminal(forged)), /\u001b/);
  assert.equal(makeStyle(false).red("x"), "x");
});
