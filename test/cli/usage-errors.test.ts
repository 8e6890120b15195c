/**
 * Small usage mistakes are refused, not guessed at (issue 29 item 7): no command at all, a GPU
 * architecture nothing has, -q with -v. Each is exit 2 with one line and a hint (the help, for no
 * command), and what still works keeps working.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";

const FATBIN = fileURLToPath(new URL("../../../test/fixtures/fatbin/compute_75.so", import.meta.url));

function assertOneLineError(args: string[], message: RegExp) {
  const run = runCli(args);
  assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
  assert.equal(run.stdout, "");
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, run.stderr);
  assert.match(lines[0]!, message);
  assert.match(lines[1]!, /^ {2}hint: \S/);
}

test("gpuprep with no command prints the help on stderr and exits 2; --help is still 0 on stdout", () => {
  const bare = runCli([]);
  assert.equal(bare.code, 2);
  assert.equal(bare.stdout, "");
  assert.match(bare.stderr, /^gpuprep \S+: .*\n\nusage: gpuprep <command> \[flags\]/);
  const help = runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.equal(help.stdout, bare.stderr);
});

test("scan --gpu with an architecture no GPU has is refused; a real one is judged", () => {
  assertOneLineError(
    ["scan", FATBIN, "--gpu", "sm_999"],
    /^gpuprep: error: scan: --gpu sm_999 is not a known architecture \(compute capability 99\.9\)$/,
  );
  assertOneLineError(["scan", FATBIN, "--gpu", "13.5"], /--gpu 13\.5 is not a known architecture/);
  const known = runCli(["scan", FATBIN, "--gpu", "sm_120"]);
  assert.equal(known.code, 0, known.stderr);
  assert.match(known.stdout, /\n1 file examined, 1 with CUDA code: 0 native, 1 PTX JIT only, 0 cannot run/);
});

test("-q and -v together are refused, before or after the command", () => {
  assertOneLineError(["-q", "-v", "doctor"], /^gpuprep: error: --quiet and --verbose cannot be combined$/);
  assertOneLineError(
    ["kb", "gpu", "h100", "--quiet", "--verbose"],
    /^gpuprep: error: kb.*: --quiet and --verbose/,
  );
  assertOneLineError(["-v", "scan", FATBIN, "-q"], /^gpuprep: error: scan: --quiet and --verbose/);
  assert.equal(runCli(["-q", "kb", "gpu", "h100"]).code, 0);
  assert.equal(runCli(["kb", "gpu", "h100", "-v"]).code, 0);
});
