/**
 * Kernel provenance, the default SDPA call, JIT dependence, the feature matrix and MFU, judged on
 * the real H100 captures of bench/device/validate-issue27.sh (test/fixtures/validate/README.md).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { judgePayload } from "../../src/validate/judge.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { parsePayload, type Payload } from "../../src/validate/payload.js";
import { attentionBackend, gemmLibrary } from "../../src/validate/provenance.js";
import { formatsByCapability } from "../../src/validate/peaks.js";
import type { ValidationItem } from "../../src/validate/report.js";
import { FIXTURES } from "./fixtures.js";

const kb = loadKnowledgeBase();

function capture(name: string): Payload {
  const report = JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as { payload: unknown };
  return parsePayload(report.payload, name);
}

const h100 = capture("report-h100-issue27.json");
const judged = judgePayload(h100, kb, { transport: "local", createdAt: "2026-11-27T15:56:26.478Z" });
const item = (items: ValidationItem[], id: string) => {
  const found = items.find((i) => i.id === id);
  assert.ok(found, `item ${id}`);
  return found;
};

test("each benchmarked op names the kernels it ran and their backend", () => {
  const expected: Array<[string, string, RegExp]> = [
    ["bench.matmul.bfloat16.8192", "cuBLASLt", /^nvjet_sm90_/],
    ["bench.matmul.tf32.8192", "cuBLAS", /^sm90_xmma_gemm_f32f32_tf32f32/],
    ["bench.features.fp8-e4m3", "cuBLASLt", /^nvjet_sm90_qqtst/],
    ["bench.features.int8", "CUTLASS", /cutlass_80_wmma_tensorop_i161616gemm_s8/],
    ["bench.sdpa.bfloat16.2x16x4096x128.flash", "flash", /pytorch_flash::flash_fwd_kernel/],
    ["bench.sdpa.bfloat16.2x16x4096x128.efficient", "efficient", /fmha_cutlassF_bf16/],
    ["bench.sdpa.bfloat16.2x16x4096x128.cudnn", "cudnn", /^cudnn_generated_fort_native_sdpa_sm90/],
    ["bench.sdpa.bfloat16.2x16x4096x128.math", "math", /gemm/],
  ];
  for (const [id, backend, kernel] of expected) {
    const provenance = item(judged.items, id).provenance;
    assert.equal(provenance?.backend, backend, id);
    assert.match(provenance?.kernels[0] ?? "", kernel, id);
  }
});

test("the name rules: cuDNN before flash (its names say flash too), softmax alone is math", () => {
  assert.equal(attentionBackend(["cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16"]), "cudnn");
  assert.equal(attentionBackend(["void pytorch_flash::flash_fwd_kernel<...>"]), "flash");
  assert.equal(attentionBackend(["ampere_bf16_s16816gemm", "softmax_warp_forward"]), "math");
  assert.equal(attentionBackend([]), "none");
  assert.equal(gemmLibrary("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cublas"), "cuBLAS");
  assert.equal(gemmLibrary("void cublasLt::splitKreduce_kernel"), "cuBLASLt");
  assert.equal(gemmLibrary("elementwise_kernel"), null);
});

test("the default SDPA call: cuDNN passes; with the fused backends switched off, math warns with why", () => {
  const normal = item(judged.items, "bench.sdpa.bfloat16.4x16x4096x64.default");
  assert.equal(normal.status, "pass");
  assert.match(normal.reason, /^ran cudnn \(cudnn_generated_fort_native_sdpa_sm90/);
  const math = judgePayload(capture("report-h100-sdpa-math.json"), kb, { transport: "local" });
  const fallback = item(math.items, "bench.sdpa.bfloat16.4x16x4096x64.default");
  assert.equal(fallback.status, "warn");
  assert.equal(fallback.provenance?.backend, "math");
  assert.match(fallback.reason, /fell back to the math backend/);
  assert.match(fallback.reason, /flash, efficient, cudnn switched off in this process/);
  assert.match(fallback.reason, /\(bfloat16, head dim 64, no mask, sm_90\)/);
});

test("JIT: the PTX-only build is JIT-dependent, the SASS build and torch's own kernels are native", () => {
  const ptx = item(judged.items, "check.jit.smoke.jitcal_ptx:smoke");
  assert.equal(ptx.status, "warn");
  assert.match(
    ptx.reason,
    /ran only through the driver's JIT compilation of PTX \(loaded libjitcal_ptx\.so\)/,
  );
  assert.match(ptx.reason, /CUDA error 223: PTX JIT compilation was disabled/);
  assert.match(ptx.reason, /first call 32\.5 ms with JIT, failed after 2\.0 ms without/);
  assert.equal(
    judged.items.find((i) => i.id === "check.jit.smoke.jitcal_sass:smoke"),
    undefined,
  );
  const summary = item(judged.items, "check.jit");
  assert.match(summary.reason, /^10 of 11 calls ran the same with CUDA_DISABLE_PTX_JIT=1/);
  assert.match(summary.reason, /gemm\.bfloat16 122\.0 ms \/ 186\.1 ms/);
  // The same payload without the PTX-only build: nothing depends on JIT.
  const native = structuredClone(h100);
  for (const run of [native.jit?.normal, native.jit?.noJit])
    if (run) run.smokes = run.smokes.filter((s) => !s.name.includes("jitcal_ptx"));
  const clean = judgePayload(native, kb, { transport: "local" });
  assert.equal(item(clean.items, "check.jit").status, "pass");
  assert.equal(clean.items.filter((i) => i.id.startsWith("check.jit.")).length, 0);
});

test("feature matrix: fp8 and int8 against the KB's dense peaks; MX formats not on Hopper, from the KB", () => {
  assert.deepEqual(formatsByCapability(kb)["9.0"], { fp8: true, int8: true, mxfp8: false, nvfp4: false });
  const fp8 = item(judged.items, "bench.features.fp8-e4m3");
  assert.equal(fp8.status, "pass");
  assert.equal(fp8.reference?.value, 1979);
  assert.ok(Math.abs((fp8.ratio ?? 0) - 1262.3 / 1979) < 0.01, String(fp8.ratio));
  const int8 = item(judged.items, "bench.features.int8");
  assert.equal(int8.status, "warn", "slow, but torch's kernel choice: never a failure on speed");
  assert.match(int8.reason, /133\.1 TOPS, 7% of the 1979 TOPS dense int8 peak/);
  const mx = item(judged.items, "bench.features.mxfp8");
  assert.equal(mx.status, "skip");
  assert.match(
    mx.reason,
    /^not on this architecture: the knowledge base's NVIDIA H100 80GB HBM3 row has no mxfp8/,
  );
  const cells = judged.featureMatrix ?? [];
  const cell = (feature: string) => cells.find((c) => c.feature.startsWith(feature));
  assert.equal(cell("bf16 GEMM")?.arch, "yes");
  assert.equal(cell("nvfp4")?.arch, "not-on-arch");
  assert.equal(cell("nvfp4")?.ran, false);
  assert.equal(cell("SDPA cudnn")?.ran, true);
  assert.equal(cell("NCCL all-reduce")?.ran, false);
});

test("MFU: tokens/s, achieved TFLOP/s and MFU vs the dense bf16 peak, for both configs", () => {
  const small = item(judged.items, "bench.mfu");
  assert.equal(small.status, "info");
  assert.match(
    small.reason,
    /LlamaForCausalLM 134M parameters \(12 layers, 12 heads of 64\), batch 8 x seq 2048/,
  );
  assert.match(small.reason, /192,407 tokens\/s/);
  assert.match(
    small.reason,
    /MFU 17\.2% of the 989\.5 TFLOP\/s dense bf16 peak; attention ran cudnn, GEMMs cuBLASLt/,
  );
  const large = judgePayload(capture("report-h100-mfu-374m.json"), kb, { transport: "local" });
  const mfu = item(large.items, "bench.mfu");
  assert.ok(Math.abs((mfu.ratio ?? 0) - 0.217) < 0.001, String(mfu.ratio));
  // FLOPs per token = 6 N + 12 L (H Q) T, from the payload's own counts.
  const r = large.payload.mfu?.result;
  assert.ok(r);
  assert.equal(r.flopsPerToken, 6 * (r.matmulWeights ?? 0) + 12 * 24 * 1024 * 2048);
  assert.equal(item(large.items, "bench.mfu.attention").status, "pass");
});

test("--from keeps the capture's time and says when it judged again", () => {
  assert.equal(judged.createdAt, "2026-11-27T15:56:26.478Z");
  assert.ok(judged.judgedAt && judged.judgedAt > judged.createdAt);
});
