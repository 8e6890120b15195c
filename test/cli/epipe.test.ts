/**
 * issue 17: a reader that stops early (`| head -1`, `| true`) ends gpuprep quietly: no EPIPE stack
 * trace, and status 0 as far as the pipeline (pipefail) can tell. Real pipes through bash; the
 * outputs are far larger than a pipe's 64 KiB buffer, so the writes do hit the closed end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { CLI, shellWord } from "../support/cli.js";

function pipeline(args: string, reader: string) {
  const script = `set -o pipefail; ${shellWord(process.execPath)} ${shellWord(CLI)} ${args} | ${reader}`;
  const result = spawnSync("bash", ["-c", script], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("scan /usr/lib --all | head -1: one line, nothing on stderr, pipeline status 0", () => {
  const { code, stdout, stderr } = pipeline("scan /usr/lib --all", "head -1");
  assert.equal(stderr, "", "no EPIPE trace");
  assert.equal(code, 0);
  assert.match(stdout, /^gpuprep scan/);
  assert.equal(stdout.split("\n").length, 2, "one line through head");
});

test("a reader that reads nothing (| true), text and --json: quiet, status 0", () => {
  for (const args of ["scan /usr/lib --all", "scan /usr/lib --all --json"]) {
    const { code, stderr } = pipeline(args, "true");
    assert.equal(stderr, "", `${args}: ${stderr}`);
    assert.equal(code, 0, args);
  }
});

test("stderr closed early too (-v 2>&1 | head -2): quiet", () => {
  const { code, stdout } = pipeline("scan /usr/lib --all -v 2>&1", "head -2");
  assert.equal(code, 0);
  assert.doesNotMatch(stdout, /EPIPE|\n\s+at /);
  assert.equal(stdout.split("\n").length, 3, "two lines through head");
});
