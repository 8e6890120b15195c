/**
 * `gpuprep memory` end to end with real interpreters: Debian's CPU torch 1.13 at /usr/bin/python3
 * (what CI has: no MemTracker, no CUDA) runs the measured search on CPU trials of the test
 * factories, and every kind of bad input gets one line, a hint and exit 2.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { needs, PYTHON3_TORCH } from "../support/needs.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../../../test/memory/fixtures/", import.meta.url));
const DEBIAN = "/usr/bin/python3";

function memory(args: string[], cwd = FIXTURES) {
  const result = spawnSync(process.execPath, [CLI, "memory", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 300_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function assertOneLineError(args: string[], pattern: RegExp) {
  const { code, stdout, stderr } = memory(args);
  assert.equal(code, 2, `exit code for ${args.join(" ")}:\n${stdout}\n${stderr}`);
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, `want an error line and a hint, got:\n${stderr}`);
  assert.match(lines[0] ?? "", /^gpuprep: error: memory/);
  assert.match(lines[0] ?? "", pattern);
  assert.match(lines[1] ?? "", /^ {2}hint: /);
  assert.doesNotMatch(stderr, /\n\s+at |Traceback/, "no stack trace");
}

const dir = mkdtempSync(join(tmpdir(), "gpuprep-memory-cli-"));
writeFileSync(join(dir, "broken.json"), '{"model_type": "gpt2", ');
writeFileSync(join(dir, "other.json"), '{"hello": "world"}');
const H100 = ["--target", "H100 SXM"];

test("bad input: one line and a hint, exit 2, before any Python runs", () => {
  assertOneLineError(["--model", join(dir, "broken.json"), ...H100], /broken\.json is not valid JSON/);
  assertOneLineError(["--model", join(dir, "other.json"), ...H100], /no "model_type"/);
  assertOneLineError(["--model", "./no/such/dir", ...H100], /does not exist/);
  assertOneLineError(["--model", "gpt2-tiny.json", "--frobnicate"], /Unknown option '--frobnicate'/);
  assertOneLineError(["--model", "gpt2-tiny.json", "--batch", "a lot"], /neither a batch nor a range/);
  assertOneLineError(["--model", "gpt2-tiny.json", "--optimizer", "lion"], /--optimizer lion is not one of/);
  assertOneLineError(
    ["--model", "gpt2-tiny.json", "--target", "Voodoo 2"],
    /no GPU the knowledge base knows/,
  );
  assertOneLineError(
    ["--model", "org/never-downloaded", ...H100],
    /neither a path nor a model in the local Hugging Face cache/,
  );
});

test("Debian's torch 1.13: the trace tier says which torch it needs", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  assertOneLineError(
    ["--model", "gpt2-tiny.json", "--python", DEBIAN, "--tier", "trace", ...H100, "--batch", "2"],
    /trace tier needs torch >= 2\.5 .*1\.13/,
  );
});

test("--measure where torch has no CUDA: one clear line, exit 2", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  assertOneLineError(
    ["--factory", "models:tiny_mlp", "--python", DEBIAN, "--measure", ...H100, "--batch", "1..4"],
    /--measure needs a CUDA GPU: this torch has no CUDA build/,
  );
});

test("a factory that raises is one line naming the factory and its error", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  assertOneLineError(
    [
      "--factory",
      "models:raises",
      "--python",
      DEBIAN,
      "--measure",
      "--trial-device",
      "cpu",
      ...H100,
      "--batch",
      "2",
    ],
    /models:raises raised ValueError: the factory could not find its weights table/,
  );
  assertOneLineError(
    [
      "--factory",
      "models:no_inputs",
      "--python",
      DEBIAN,
      "--measure",
      "--trial-device",
      "cpu",
      ...H100,
      "--batch",
      "2",
    ],
    /returned a model but no inputs/,
  );
});

test("measured search: out-of-memory is a result, the answer is the last batch under it, JSON envelope", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const { code, stdout, stderr } = memory([
    "--factory",
    "models:oom_above_4",
    "--python",
    DEBIAN,
    "--measure",
    "--trial-device",
    "cpu",
    ...H100,
    "--batch",
    "1..16",
    "--json",
  ]);
  assert.equal(code, 0, stderr);
  const report = JSON.parse(stdout);
  assert.equal(report.schema, "gpuprep.memory");
  assert.equal(report.schemaVersion, 1);
  assert.equal(report.measuredMaxBatch, 4);
  const statuses = report.trials.map((t: { batch: number; status: string }) => `${t.batch}:${t.status}`);
  assert.deepEqual(statuses, ["1:ok", "2:ok", "4:ok", "8:oom", "6:oom", "5:oom", "4:ok"]);
  assert.equal(report.verdict.fits, true);
  assert.equal(report.estimates[0].tier, "measured");
  assert.match(report.notes.join("\n"), /trace tier not available: .*torch >= 2\.5/);
});

test("measured search: a hung trial is killed at its limit and the search goes on", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const { code, stdout, stderr } = memory([
    "--factory",
    "models:hang_at_8",
    "--python",
    DEBIAN,
    "--measure",
    "--trial-device",
    "cpu",
    ...H100,
    "--batch",
    "4..8",
    "--timeout",
    "15",
  ]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^\s+8\s+timeout\s/m);
  assert.match(stdout, /largest batch measured to fit \(confirmed by 20 more steps\): 7/);
  assert.match(stdout, /batch 8: did not finish within 15 s and was killed/);
});

test("seed 001's rule from a batch that ran: 8 x 0.85 x 79.6 GiB / 30 GiB = 18, without any torch trace", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const { code, stdout, stderr } = memory([
    "--model",
    "gpt2-tiny.json",
    "--python",
    DEBIAN,
    ...H100,
    "--current-batch",
    "8",
    "--current-memory",
    "30",
    "--json",
  ]);
  assert.equal(code, 0, stderr);
  const report = JSON.parse(stdout);
  assert.equal(report.device.totalBytes, 81559 * 1024 * 1024); // the KB's nvidia-smi figure for the H100 SXM
  assert.equal(report.scaledRule.maxBatch, 18);
  assert.equal(report.scaledRule.currentSource, "--current-memory");
  // Without a torch that traces, the formula tier still estimates and searches 1..1024 (issue 24);
  // the seed rule is reported beside it. A tiny GPT-2 fits the H100 at every batch of the range.
  assert.equal(report.estimates[0].tier, "formula");
  assert.deepEqual(report.searchRange, { min: 1, max: 1024 });
  assert.equal(report.verdict.maxBatch, 1024);
});

test("--save writes the machine's facts as gathered, --from reads them back instead of gathering", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  // The H100 capture replayed by an nvidia-smi stand-in (test/fixtures/nvidia-smi/README.md).
  const capture = fileURLToPath(new URL("../../../test/fixtures/nvidia-smi/h100", import.meta.url));
  const bin = mkdtempSync(join(tmpdir(), "gpuprep-memory-smi-"));
  writeFileSync(
    join(bin, "nvidia-smi"),
    `#!/bin/sh\ncase "$1" in --query-gpu=*) exec cat ${capture}/query.csv;; *) exec cat ${capture}/nvidia-smi.txt;; esac\n`,
    { mode: 0o755 },
  );
  const saved = join(dir, "machine.json");
  const base = ["--model", "gpt2-tiny.json", "--tier", "formula", "--json"];
  const gathered = spawnSync(
    process.execPath,
    [CLI, "memory", ...base, "--python", DEBIAN, "--save", saved],
    {
      cwd: FIXTURES,
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}` },
    },
  );
  assert.equal(gathered.status, 0, gathered.stderr);
  const device = JSON.parse(gathered.stdout).device;
  assert.equal(device.name, "NVIDIA H100 80GB HBM3");
  // No stand-in now: the same machine comes from the file.
  const replayed = memory([...base, "--from", saved, "-v"]);
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.deepEqual(JSON.parse(replayed.stdout).device, device);
  assert.doesNotMatch(replayed.stderr, /ran .*python/, "nothing gathered");
  const plain = base.filter((arg) => arg !== "--json"); // under --json an error is also a JSON line
  assertOneLineError([...plain, "--from", saved, ...H100], /--from and --target cannot be combined/);
  assertOneLineError(
    [...plain, "--from", saved, "--save", join(dir, "again.json")],
    /with --from or --target nothing is gathered/,
  );
});
