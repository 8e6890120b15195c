/**
 * The estimate's searches without a GPU: the largest fitting batch of any tier, the measured
 * search started from the estimate (two trials when the estimate is right), and the formula tier
 * for model types it has no reader of its own for (issue 24: gemma, mixtral, phi3, ... were refused).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { largestFitting } from "../../src/memory/estimate.js";
import { genericModelConfig, genericShape, groupsFromMeta } from "../../src/memory/generic-config.js";
import { formulaEstimate } from "../../src/memory/formula.js";
import { measuredSearch, type TrialOutcome } from "../../src/memory/search.js";
import { AMP_TRAIN } from "./support.js";

const GIB = 2 ** 30;

test("largestFitting: the largest batch of the range under the limit, the range's end, or null", () => {
  const total = (b: number) => 10 * GIB + b * GIB;
  assert.equal(largestFitting(total, 40 * GIB, { min: 1, max: 1024 }), 30);
  assert.equal(largestFitting(total, 40 * GIB, { min: 1, max: 16 }), 16);
  assert.equal(largestFitting(total, 40 * GIB, { min: 31, max: 64 }), null);
  assert.equal(largestFitting(total, 0, { min: 1, max: 8 }), null);
});

function card(limit: number, calls: number[]) {
  return async (batch: number): Promise<TrialOutcome> => {
    calls.push(batch);
    const used = GIB * (2 + batch);
    return used > limit
      ? {
          batch,
          status: "oom",
          peakAllocatedBytes: null,
          peakReservedBytes: null,
          stepMs: null,
          error: "CUDA out of memory",
        }
      : {
          batch,
          status: "ok",
          peakAllocatedBytes: used,
          peakReservedBytes: used,
          stepMs: 10 * batch,
          error: null,
        };
  };
}

const OPTIONS = {
  batchMin: 1,
  batchMax: 64,
  totalBytes: 80 * GIB,
  marginFraction: 0.05,
  contextBytes: 0,
  steps: 3,
  confirmSteps: 20,
};

test("measured search from a right estimate: the estimate, its neighbour, the confirmation", async () => {
  const calls: number[] = [];
  // 76 GiB usable: batch 74 fits the card, so cap the range at 64; the card fits 2 + b <= 76.
  const result = await measuredSearch(card(80 * GIB, calls), { ...OPTIONS, batchMax: 128, start: 74 });
  assert.equal(result.maxBatch, 74);
  assert.deepEqual(calls, [74, 75, 74]);
});

test("measured search from a wrong estimate widens away from it, then bisects; doubling needs more trials", async () => {
  const low: number[] = [];
  const fromLow = await measuredSearch(card(80 * GIB, low), { ...OPTIONS, batchMax: 128, start: 60 });
  assert.equal(fromLow.maxBatch, 74);
  const high: number[] = [];
  const fromHigh = await measuredSearch(card(80 * GIB, high), { ...OPTIONS, batchMax: 128, start: 90 });
  assert.equal(fromHigh.maxBatch, 74);
  const doubling: number[] = [];
  const plain = await measuredSearch(card(80 * GIB, doubling), { ...OPTIONS, batchMax: 128 });
  assert.equal(plain.maxBatch, 74);
  assert.ok(
    low.length < doubling.length && high.length < doubling.length,
    `${low.length} ${high.length} ${doubling.length}`,
  );
});

test("from a low estimate, its trial's real use and the estimate's growth per sample predict the edge", async () => {
  const calls: number[] = [];
  const run = card(80 * GIB, calls);
  const result = await measuredSearch(run, { ...OPTIONS, batchMax: 128, start: 60, perSampleBytes: GIB });
  assert.equal(result.maxBatch, 74);
  // 60 passes at 62 GiB: 14 more samples fit under 76 GiB. 75 fails, and 74 is confirmed with 20 steps.
  assert.deepEqual(calls, [60, 75, 74]);
  assert.deepEqual(
    result.trials.map((t) => t.purpose),
    ["search", "search", "confirm"],
  );
});

test("the edge tried first with the confirmation's 20 steps: right, it and its neighbour settle the search", async () => {
  const calls: number[] = [];
  const steps: number[] = [];
  const run = card(80 * GIB, calls);
  const counted = async (batch: number, n: number) => (steps.push(n), run(batch));
  const right = await measuredSearch(counted, {
    ...OPTIONS,
    batchMax: 128,
    start: 74,
    perSampleBytes: GIB,
    firstConfirm: true,
  });
  assert.equal(right.maxBatch, 74);
  assert.equal(right.confirmed, true);
  assert.deepEqual(calls, [74, 75]);
  assert.deepEqual(steps, [20, 3]);
  // Two short: the confirmed 72 predicts 74, 75 fails, 74 is confirmed.
  calls.length = 0;
  const low = await measuredSearch(card(80 * GIB, calls), {
    ...OPTIONS,
    batchMax: 128,
    start: 72,
    perSampleBytes: GIB,
    firstConfirm: true,
  });
  assert.equal(low.maxBatch, 74);
  assert.deepEqual(calls, [72, 75, 74]);
});

test("a first trial that ran over the limit predicts down from its real use", async () => {
  const calls: number[] = [];
  // 77 runs (79 GiB on the 80 GiB card) but is over 95 %: 3 GiB over, so 74.
  const result = await measuredSearch(card(80 * GIB, calls), {
    ...OPTIONS,
    batchMax: 128,
    start: 77,
    perSampleBytes: GIB,
  });
  assert.equal(result.maxBatch, 74);
  assert.deepEqual(calls, [77, 75, 74]);
});

test("a growth per sample 10 % off is corrected by the line through two real uses", async () => {
  const calls: number[] = [];
  const result = await measuredSearch(card(80 * GIB, calls), {
    ...OPTIONS,
    batchMax: 128,
    start: 60,
    perSampleBytes: 0.9 * GIB,
  });
  assert.equal(result.maxBatch, 74);
  assert.ok(calls.length <= 4, `trials: ${calls.join(", ")}`);
  assert.equal(calls[calls.length - 1], 74);
});

test("a predicted edge that fails its 20-step run: the search goes on below it and confirms that", async () => {
  const calls: number[] = [];
  const inner = card(80 * GIB, calls);
  // 74 passes 3 steps but not 20 (fragmentation over a longer run).
  const run = async (batch: number, steps: number): Promise<TrialOutcome> =>
    steps === 20 && batch === 74
      ? (calls.push(batch),
        {
          batch,
          status: "oom",
          peakAllocatedBytes: null,
          peakReservedBytes: null,
          stepMs: null,
          error: "CUDA out of memory",
        })
      : inner(batch);
  const result = await measuredSearch(run, { ...OPTIONS, batchMax: 128, start: 60, perSampleBytes: GIB });
  assert.equal(result.maxBatch, 73);
  assert.equal(result.confirmed, true);
  assert.match(result.notes.join("\n"), /batch 74 failed its 20-step confirmation run/);
  assert.deepEqual(
    result.trials.filter((t) => t.purpose === "confirm").map((t) => [t.batch, t.passed]),
    [
      [74, false],
      [73, true],
    ],
  );
});

test("the formula tier reads configs it has no reader for: Mixtral's experts, Gemma's head_dim, Whisper's two stacks", () => {
  const mixtral = genericShape({
    model_type: "mixtral",
    hidden_size: 4096,
    intermediate_size: 14336,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    num_local_experts: 8,
    num_experts_per_tok: 2,
    vocab_size: 32000,
    hidden_act: "silu",
  });
  assert.ok(mixtral);
  assert.equal(mixtral.ffn, 2 * 14336); // two experts per token
  assert.equal(mixtral.expertFfn, 8 * 14336);
  assert.equal(mixtral.gated, true);
  const gemma = genericShape({
    hidden_size: 2048,
    num_hidden_layers: 18,
    num_attention_heads: 8,
    num_key_value_heads: 1,
    head_dim: 256,
    vocab_size: 256000,
  });
  assert.equal(gemma?.headDim, 256);
  const whisper = genericShape({
    d_model: 768,
    encoder_layers: 12,
    decoder_layers: 12,
    encoder_attention_heads: 12,
    encoder_ffn_dim: 3072,
    vocab_size: 51865,
  });
  assert.equal(whisper?.layers, 24);
  assert.equal(whisper?.crossLayers, 12);
  assert.equal(genericShape({ model_type: "mystery" }), null);
});

test("a generic model is estimated at any batch, with exact parameters when the meta-device build gave them", () => {
  const raw = {
    model_type: "phi3",
    architectures: ["Phi3ForCausalLM"],
    hidden_size: 3072,
    intermediate_size: 8192,
    num_hidden_layers: 8,
    num_attention_heads: 32,
    vocab_size: 32064,
    hidden_act: "silu",
    tie_word_embeddings: false,
  };
  const approx = genericModelConfig(raw, "phi3.json", null, "Phi3ForCausalLM");
  assert.equal(approx.approximateParameters, true);
  const meta = groupsFromMeta([
    { path: "model.layers.*.mlp.gate_up_proj.weight", shape: [16384, 3072], role: "linear", count: 8 },
    { path: "model.embed_tokens.weight", shape: [32064, 3072], role: "embedding", count: 1 },
  ]);
  const exact = genericModelConfig(raw, "phi3.json", meta, "Phi3ForCausalLM");
  assert.equal(exact.parameterCount, 16384 * 3072 * 8 + 32064 * 3072);
  const work = { ...AMP_TRAIN, seqLen: 1024 };
  const at4 = formulaEstimate(exact, work, 4);
  const at8 = formulaEstimate(exact, work, 8);
  assert.ok(at8.breakdown.activations > at4.breakdown.activations * 1.9);
  assert.ok(Number.isInteger(at8.totalBytes) && Number.isInteger(at8.breakdown.activations));
  assert.ok(at4.notes.some((n) => /borrowed from llama/.test(n)));
});
