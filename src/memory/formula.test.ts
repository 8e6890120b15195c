import { test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../errors.js";
import { defaultCalibration } from "./calibration.js";
import { modelConfigFromJson } from "./hf-config.js";
import { formulaEstimate, loraParameterCount, maxBatchByFormula, weightTerms } from "./formula.js";
import { AMP_TRAIN, capturedModel } from "../../test/memory/support.js";
import type { DeviceBudget } from "./types.js";

const GPT2_P = 124439808;
// GPT-2 small's matmul weights: per layer c_attn 768x2304, attn c_proj 768x768, c_fc 768x3072, mlp c_proj 3072x768,
// plus the tied wte (50257x768) that the LM head multiplies with.
const GPT2_MATMUL = 12 * (768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768) + 50257 * 768;

test("AMP training with AdamW: 4 B weights + 8 B states per param, 2 B autocast copies of matmul weights", () => {
  const w = weightTerms(capturedModel("gpt2-small"), AMP_TRAIN);
  assert.equal(w.weights, 4 * GPT2_P);
  assert.equal(w.gradients, 4 * GPT2_P);
  assert.equal(w.optimizerState, 8 * GPT2_P);
  assert.equal(w.ampWeightCopies, 2 * GPT2_MATMUL);
  assert.equal(w.trainableParameterCount, GPT2_P);
});

test("bf16 weights without autocast: AdamW states in bf16 (4 B/param), no autocast copies", () => {
  const w = weightTerms(capturedModel("gpt2-small"), { ...AMP_TRAIN, amp: null, dtype: "bfloat16" });
  assert.equal(w.weights, 2 * GPT2_P);
  assert.equal(w.optimizerState, 4 * GPT2_P);
  assert.equal(w.ampWeightCopies, 0);
});

test("SGD with momentum keeps 4 B/param", () => {
  assert.equal(
    weightTerms(capturedModel("gpt2-small"), { ...AMP_TRAIN, optimizer: "sgd" }).optimizerState,
    4 * GPT2_P,
  );
});

test("8-bit AdamW: 2 B/param, but tensors under 4096 elements keep 32-bit states (8 B)", () => {
  // GPT-2 small's small tensors: per layer biases 2304+768+3072+768 and four LayerNorm vectors of 768; ln_f 2x768.
  const small = 12 * (2304 + 768 + 3072 + 768 + 4 * 768) + 2 * 768;
  const w = weightTerms(capturedModel("gpt2-small"), { ...AMP_TRAIN, optimizer: "adamw8bit" });
  assert.equal(w.optimizerState, 2 * (GPT2_P - small) + 8 * small);
});

test("Adafactor: rows + cols per matrix, full second moment for vectors (fp32)", () => {
  // A one-layer GPT-2 small enough to count by hand: matrices wte 10x8, wpe 4x8, c_attn 8x24, c_proj 8x8, c_fc 8x16,
  // mlp c_proj 16x8 -> (10+8)+(4+8)+(24+8)+(8+8)+(16+8)+(8+16) = 126; vectors: biases 24+8+16+8, three LayerNorms 3x16 = 104.
  const tiny = modelConfigFromJson(
    { model_type: "gpt2", n_embd: 8, n_layer: 1, n_head: 2, vocab_size: 10, n_positions: 4, n_inner: 16 },
    "tiny",
  );
  assert.equal(weightTerms(tiny, { ...AMP_TRAIN, optimizer: "adafactor" }).optimizerState, 4 * (126 + 104));
});

test("LoRA: r·(in+out) per target, frozen base has no gradients or optimizer state", () => {
  const gpt2 = capturedModel("gpt2-small");
  const lora = { rank: 16, alpha: 32, dropout: 0, targets: ["c_attn"] };
  const adapters = 16 * (768 + 2304) * 12;
  assert.equal(loraParameterCount(gpt2, 16, ["c_attn"]), adapters);
  // PEFT reports 294,912 trainable parameters for GPT-2 with r=8 on c_attn: half of r=16.
  assert.equal(loraParameterCount(gpt2, 8, ["c_attn"]), 294912);
  const w = weightTerms(gpt2, { ...AMP_TRAIN, task: "finetune-lora", lora });
  assert.equal(w.trainableParameterCount, adapters);
  assert.equal(w.weights, 4 * GPT2_P + 4 * adapters);
  assert.equal(w.gradients, 4 * adapters);
  assert.equal(w.optimizerState, 8 * adapters);
  // Autocast's 16-bit casts: the adapters' (cached) and the frozen base's matmul weights (saved for the input gradient).
  assert.equal(w.ampWeightCopies, 2 * adapters + 2 * GPT2_MATMUL);
  // GQA: v_proj is 1024 -> 4 KV heads x 64 = 256 wide.
  assert.equal(
    loraParameterCount(capturedModel("llama-shaped-8l"), 8, ["q_proj", "v_proj"]),
    8 * 8 * (2048 + 1280),
  );
});

test("LoRA targets that match nothing are a one-line UserError naming the model's Linear layers", () => {
  assert.throws(
    () => loraParameterCount(capturedModel("gpt2-small"), 8, ["q_proj"]),
    (error: unknown) =>
      error instanceof UserError && /match no Linear/.test(error.message) && /c_attn/.test(error.hint ?? ""),
  );
});

test("QLoRA: NF4 base Linears at 0.5 B + double-quant constants, the rest in the given dtype, adapters fp32", () => {
  const llama = capturedModel("llama-shaped-8l");
  const lora = { rank: 16, alpha: 32, dropout: 0, targets: ["q_proj", "v_proj"] };
  const w = weightTerms(llama, { ...AMP_TRAIN, dtype: "bfloat16", task: "finetune-qlora", lora });
  // Layer Linears: q,o 1024x1024, k,v 1024x256, gate/up/down 1024x2816, 8 layers.
  const quantized = 8 * (2 * 1024 * 1024 + 2 * 1024 * 256 + 3 * 1024 * 2816);
  const rest = 155730944 - quantized; // embeddings, norms, untied lm_head
  const adapters = 8 * 16 * (2048 + 1280);
  const perQuantized = 0.5 + 8 / 64 / 8 + 32 / (64 * 256) / 8; // QLoRA paper: 4 bits + 0.127 bits
  assert.equal(w.weights, quantized * perQuantized + rest * 2 + adapters * 4);
  assert.equal(w.trainableParameterCount, adapters);
  assert.equal(w.optimizerState, 8 * adapters);
});

test("the estimate's parts add up, with context and allocator reserve as their own lines", () => {
  const c = defaultCalibration();
  const e = formulaEstimate(capturedModel("gpt2-small"), AMP_TRAIN, 8);
  const b = e.breakdown;
  assert.equal(
    e.peakAllocatedBytes,
    b.parameters + b.gradients + b.optimizerState + b.activations + b.temporaries,
  );
  assert.equal(b.cudaContext, c.cudaContextBytes.value);
  assert.equal(b.allocatorOverhead, Math.round(e.peakAllocatedBytes * c.allocatorOverheadFraction.value));
  assert.equal(e.totalBytes, e.peakAllocatedBytes + b.cudaContext + b.allocatorOverhead);
  assert.equal(e.tier, "formula");
  assert.deepEqual(e.accuracy, {
    medianAbsErrorPct: c.accuracy.medianAbsErrorPct,
    p95AbsErrorPct: c.accuracy.p95AbsErrorPct,
    source: c.accuracy.source,
  });
});

const GiB = 2 ** 30;
const within = (actual: number, expected: number, pct: number) =>
  assert.ok(
    Math.abs(actual / expected - 1) * 100 <= pct,
    `${(actual / GiB).toFixed(2)} GiB vs ${(expected / GiB).toFixed(2)} GiB`,
  );

test("held-out cells of the H100 bench (memory-accuracy-h100.jsonl): Qwen2 with checkpointing, Llama-1.1B", () => {
  const ckpt = { ...AMP_TRAIN, gradCheckpointing: true };
  within(formulaEstimate(capturedModel("qwen2-0.5b"), ckpt, 8).peakAllocatedBytes, 22.79 * GiB, 3);
  within(formulaEstimate(capturedModel("llama-1.1b"), AMP_TRAIN, 4).peakAllocatedBytes, 25.11 * GiB, 3);
});

test("checkpointing and smaller batches lower activations; inference holds no gradients or optimizer state", () => {
  const gpt2 = capturedModel("gpt2-small");
  const full = formulaEstimate(gpt2, AMP_TRAIN, 8);
  const ckpt = formulaEstimate(gpt2, { ...AMP_TRAIN, gradCheckpointing: true }, 8);
  assert.ok(ckpt.breakdown.activations < full.breakdown.activations / 1.5);
  const half = formulaEstimate(gpt2, AMP_TRAIN, 4);
  // Whole bytes: each half rounds up once.
  assert.ok(Math.abs(half.breakdown.activations * 2 - full.breakdown.activations) <= 2);
  const infer = formulaEstimate(gpt2, { ...AMP_TRAIN, task: "infer", amp: null, dtype: "bfloat16" }, 8);
  assert.equal(infer.breakdown.gradients + infer.breakdown.optimizerState, 0);
  assert.equal(infer.breakdown.parameters, 2 * GPT2_P);
  assert.equal(infer.trainableParameterCount, 0);
});

test("image models: ViT tokens from patches, ResNet from feature maps; bigger images cost more", () => {
  const vit = capturedModel("vit-b16");
  const work = { ...AMP_TRAIN, seqLen: null, imageSize: 224 };
  const e224 = formulaEstimate(vit, work, 64);
  const e384 = formulaEstimate(vit, { ...work, imageSize: 384 }, 64);
  // 197 vs 577 tokens per image.
  assert.ok(Math.abs(e384.breakdown.activations / e224.breakdown.activations - 577 / 197) < 1e-9);
  const resnet = formulaEstimate(capturedModel("resnet-50"), work, 16);
  assert.ok(resnet.breakdown.activations > 0);
  assert.ok(resnet.notes.some((n) => /feature-map sizes/.test(n)));
});

test("maxBatchByFormula finds the largest batch under the usable bytes, null when batch 1 does not fit", () => {
  const gpt2 = capturedModel("gpt2-small");
  const at = (batch: number) => formulaEstimate(gpt2, AMP_TRAIN, batch).totalBytes;
  const budget = (usable: number): DeviceBudget => ({
    name: "test",
    totalBytes: usable,
    unified: false,
    usableBytes: usable,
    marginFraction: 0,
    source: "test",
  });
  assert.equal(maxBatchByFormula(gpt2, AMP_TRAIN, budget(at(13))), 13);
  assert.equal(maxBatchByFormula(gpt2, AMP_TRAIN, budget(at(13) - 1)), 12);
  assert.equal(maxBatchByFormula(gpt2, AMP_TRAIN, budget(at(1) - 1)), null);
});

test("bad work: batch 0, LoRA task without LoRA, sequence model without a length", () => {
  const gpt2 = capturedModel("gpt2-small");
  assert.throws(() => formulaEstimate(gpt2, AMP_TRAIN, 0), UserError);
  assert.throws(() => formulaEstimate(gpt2, { ...AMP_TRAIN, task: "finetune-lora" }, 1), UserError);
  assert.throws(() => formulaEstimate(gpt2, { ...AMP_TRAIN, seqLen: null }, 1), /needs --seq-len/);
});
