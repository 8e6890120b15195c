/**
 * The trace tier for real, where a torch >= 2.5 is at hand: set GPUPREP_TEST_PYTHON_T2 to its
 * Python (a CPU build does: it traces on fake CPU tensors). CI's Debian torch 1.13 cannot trace,
 * so there these tests are skipped with the reason; cli.test.ts covers what 1.13 can do.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { skipUnless, type Part } from "../support/needs.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../../../test/memory/fixtures/", import.meta.url));
const PYTHON = process.env.GPUPREP_TEST_PYTHON_T2;
/** No Debian package has it (Debian has torch 1.13), so CI skips these too. */
const TORCH_2_5: Part = {
  what: "a Python with torch >= 2.5 and transformers",
  install: "set GPUPREP_TEST_PYTHON_T2 to one (no Debian package has it, so CI cannot)",
  onCi: false,
  present: () => PYTHON !== undefined && PYTHON !== "",
};
const skip = skipUnless(TORCH_2_5);

function traceJson(args: string[]) {
  const result = spawnSync(
    process.execPath,
    [
      CLI,
      "memory",
      "--python",
      PYTHON as string,
      "--target",
      "H100 SXM",
      "--json",
      "--tier",
      "trace",
      ...args,
    ],
    { cwd: FIXTURES, encoding: "utf8", timeout: 600_000 },
  );
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

test("GPT-2 from config: fp32 parameters are 4 bytes each (tied embeddings counted once)", { skip }, () => {
  const report = traceJson(["--model", "gpt2-tiny.json", "--batch", "4", "--seq-len", "64", "--amp", "bf16"]);
  const estimate = report.estimates[0];
  assert.equal(estimate.tier, "trace");
  assert.equal(estimate.parameterCount, 141056);
  assert.equal(estimate.breakdown.parameters, 4 * estimate.parameterCount);
  // AdamW keeps two fp32 moments per parameter, plus one step counter per tensor.
  const adam = 8 * estimate.trainableParameterCount;
  assert.ok(estimate.breakdown.optimizerState >= adam && estimate.breakdown.optimizerState < adam + 4096);
  assert.ok(estimate.breakdown.activations > 0);
  assert.equal(report.verdict.fits, true);
});

test("Llama with LoRA: only the adapters train, so the optimizer holds only theirs", { skip }, () => {
  const report = traceJson([
    "--model",
    "llama-tiny.json",
    "--batch",
    "2",
    "--seq-len",
    "64",
    "--task",
    "finetune-lora",
    "--lora-rank",
    "4",
    "--lora-targets",
    "q_proj,v_proj",
  ]);
  const estimate = report.estimates[0];
  // r x (in + out) per adapted layer: q_proj 64->64 and v_proj 64->32 (2 KV heads of 16), 2 layers.
  assert.equal(estimate.trainableParameterCount, 2 * (4 * (64 + 64) + 4 * (64 + 32)));
  const adam = 8 * estimate.trainableParameterCount;
  assert.ok(estimate.breakdown.optimizerState >= adam && estimate.breakdown.optimizerState < adam + 4096);
  // peft's adapters where peft imports, gpuprep's own where it does not: 4 layers either way.
  assert.match(estimate.notes.join("\n"), /LoRA r=4 on 4 (Linear )?layers/);
});

test(
  "wav2vec2 CTC at 8 x 500 frames: ctc_loss's lengths come from a mask too large to copy, and it traces",
  { skip },
  () => {
    // 8 x 160,000 audio samples: the default attention mask (ones_like the audio) is past the shadow
    // limit, so the input lengths summed from it had no real values and ctc_loss refused them.
    const report = traceJson([
      "--model",
      "wav2vec2-tiny.json",
      "--batch",
      "8",
      "--seq-len",
      "500",
      "--amp",
      "bf16",
    ]);
    assert.equal(report.traceFallback, null);
    const estimate = report.estimates.find((e: { batch: number }) => e.batch === 8);
    assert.equal(estimate.tier, "trace");
    assert.match(estimate.notes.join("\n"), /LayerDrop off in the trace \(layerdrop 0\.1\)/);
  },
);

test("a factory model with gradient checkpointing says how it was checkpointed", { skip }, () => {
  const report = traceJson(["--factory", "models:tiny_mlp", "--batch", "8", "--grad-checkpointing"]);
  assert.match(
    report.estimates[0].notes.join("\n"),
    /torch\.utils\.checkpoint around the 3 blocks of blocks/,
  );
});

test("does not fit even at the smallest batch: exit 1 and the memory missing", { skip }, () => {
  // A 99.5 % margin leaves 0.5 % of the H100 (408 MiB): less than the CUDA context alone.
  const result = spawnSync(
    process.execPath,
    [
      CLI,
      "memory",
      "--python",
      PYTHON as string,
      "--target",
      "H100 SXM",
      "--model",
      "gpt2-tiny.json",
      "--batch",
      "1",
      "--seq-len",
      "32",
      "--margin",
      "0.995",
    ],
    { cwd: FIXTURES, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 600_000 },
  );
  assert.equal(result.status, 1, result.stderr);
  const missing = /verdict: does not fit at batch 1: ([\d.]+) MiB missing/.exec(result.stdout);
  assert.ok(missing, result.stdout);
  assert.ok(Number(missing[1]) > 352 && Number(missing[1]) < 370, `missing ${missing[1]} MiB`);
});
