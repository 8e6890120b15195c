/** issue 17: -v/--verbose prints each process gpuprep starts, shell-quoted, with its time in ms, on stderr. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";

const PYTHON = "/usr/bin/python3";

test("doctor -v on the local python: the python command line and its time", () => {
  const { code, stdout, stderr } = runCli(["doctor", "-v", "--python", PYTHON]);
  assert.ok(code === 0 || code === 1, stderr);
  assert.match(
    stderr,
    /^gpuprep: ran \/usr\/bin\/python3 - --child-timeout \d+ --extensions '[^'\n]*'…? \(\d+ ms, exit 0; started at \+\d+ ms\)$/m,
  );
  assert.doesNotMatch(stdout, /gpuprep: ran/, "stdout keeps the report only");
  // The import-directory query is an inline script: shown by its first line, not as one long "?"-joined line.
  assert.match(
    stderr,
    /^gpuprep: ran \/usr\/bin\/python3 -c 'import [^'\n]*'… \(\d+ ms, exit 0; started at \+\d+ ms\)$/m,
  );
});

test("the logged command is shell-quoted: a path with a space comes out as one word", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-verbose-"));
  const python = join(dir, "my python");
  symlinkSync(PYTHON, python);
  const { stderr } = runCli(["doctor", "--verbose", "--fast", "--python", python]);
  rmSync(dir, { recursive: true, force: true });
  assert.ok(stderr.includes(`gpuprep: ran '${python}' - --fast --child-timeout `), stderr);
});

test("scan --verbose logs nvidia-smi, also when it cannot start", () => {
  const { stderr } = runCli(["scan", "--verbose", "/usr/lib/x86_64-linux-gnu/libz.so.1"]);
  assert.match(
    stderr,
    /^gpuprep: ran nvidia-smi '--query-gpu=index,name,uuid,compute_cap,[^']*'… .*\(\d+ ms, (exit \d+|could not start: ENOENT); started at \+\d+ ms\)$/m,
  );
});

test("without -v nothing is logged", () => {
  const { stderr } = runCli(["doctor", "--fast", "--python", PYTHON]);
  assert.doesNotMatch(stderr, /gpuprep: ran/);
});
