/** issue 17: unknown help topics, kb subjects and fleet subcommands are named as such, with the list; exit 2. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli } from "../support/cli.js";

function assertNamed(args: string[], message: RegExp, hint: RegExp) {
  const { code, stdout, stderr } = runCli(args);
  assert.equal(code, 2, `gpuprep ${args.join(" ")}: ${stderr}`);
  assert.equal(stdout, "");
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, stderr);
  assert.match(lines[0]!, message);
  assert.match(lines[1]!, hint);
}

test("gpuprep help nosuch: unknown topic, and the topics", () => {
  assertNamed(
    ["help", "nosuch"],
    /^gpuprep: error: unknown topic 'nosuch'$/,
    /^ {2}hint: topics: .*doctor.*kb.*fleet/,
  );
});

test("gpuprep kb foo: unknown kb subject (not 'missing the name'), and the subjects", () => {
  assertNamed(
    ["kb", "foo"],
    /^gpuprep: error: unknown kb subject 'foo'$/,
    /^ {2}hint: subjects: gpu, cuda, torch, ngc, ext/,
  );
  const { stderr } = runCli(["kb", "foo"]);
  assert.doesNotMatch(stderr, /missing the name|gpuprep kb foo/);
});

test("gpuprep fleet nosuch: unknown fleet subcommand, and the subcommands", () => {
  assertNamed(
    ["fleet", "nosuch"],
    /^gpuprep: error: unknown fleet subcommand 'nosuch'$/,
    /^ {2}hint: subcommands: doctor, scan, validate, collect/,
  );
});

test("a known kb subject without its name still says what is missing", () => {
  assertNamed(["kb", "gpu"], /kb gpu: missing the name or version/, /e\.g\. gpuprep kb gpu /);
});
