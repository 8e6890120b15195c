/**
 * validate.py run for real: by Debian's Python with its CPU-only torch 1.13 (no torch.nn.attention,
 * no SDPA at all) and by a Python without torch. On these machines every check must say honestly
 * what is missing, and the CPU test mode must drive every benchmark's code path end to end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPayload } from "../../src/validate/payload.js";
import { judgePayload } from "../../src/validate/judge.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { FIXTURES } from "./fixtures.js";
import {
  debianPythonHas,
  needs,
  PYTHON3_TORCH,
  TORCH2_PYTHON,
  TORCH2_PYTHON_PATH,
} from "../support/needs.js";
import { makeVenv } from "../support/venv.js";

const DEBIAN_PYTHON = "/usr/bin/python3";
const kb = loadKnowledgeBase();
const find = (items: { id: string }[], id: string) => {
  const found = items.find((i) => i.id === id);
  assert.ok(found, `item ${id} exists`);
  return found as ReturnType<typeof judgePayload>["items"][number];
};

test("Debian CPU torch: checks fail or skip with reasons, models load, benchmarks skip", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const payload = await runPayload(DEBIAN_PYTHON, {
    only: ["checks", "benchmarks"],
    model: join(FIXTURES, "models", "hf"),
    extensions: ["torchvision", "json"],
  });
  const report = judgePayload(payload, kb, { transport: "local" });
  assert.equal(find(report.items, "check.torch-import").status, "pass");
  assert.match(find(report.items, "check.cuda-build").reason, /CPU-only build/);
  assert.equal(find(report.items, "check.gpu-visible").status, "fail");
  assert.equal(find(report.items, "check.arch").status, "skip");
  assert.equal(find(report.items, "check.numpy").status, "pass");
  // python3-torchvision is no part .ci/run installs, but a machine may have it: then it is imported
  // for real and passes; without it the check skips, saying it is not installed.
  const torchvision = find(report.items, "check.extension.torchvision");
  if (debianPythonHas("torchvision")) assert.equal(torchvision.status, "pass", torchvision.reason);
  else assert.deepEqual([torchvision.status, torchvision.reason], ["skip", "not installed"]);
  // A module that exists is imported for real in a child process.
  assert.equal(find(report.items, "check.extension.json").status, "pass");
  const model = find(report.items, "check.model");
  assert.equal(model.status, "pass");
  // 10x8 float32 + 8x2 bfloat16, written by make-models.py.
  assert.match(model.reason, /2 tensors, 96 parameters \(float32 80, bfloat16 16\)/);
  for (const name of ["sdpa", "matmul", "membw", "transfer", "nccl"]) {
    const item = find(report.items, `bench.${name}`);
    assert.equal(item.status, "skip");
    assert.match(item.reason, /no CUDA device.*CPU-only build/);
  }
  assert.ok(report.summary.fail >= 2);
});

test("a torch.save file loads; a broken one fails with the file named", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  for (const [file, status, pattern] of [
    ["linear.pt", "pass", /15 parameters/],
    ["broken.pt", "fail", /cannot load broken\.pt/],
  ] as const) {
    const payload = await runPayload(DEBIAN_PYTHON, {
      only: ["model"],
      model: join(FIXTURES, "models", file),
    });
    const model = find(judgePayload(payload, kb, { transport: "local" }).items, "check.model");
    assert.equal(model.status, status);
    assert.match(model.reason, pattern);
  }
});

test("Python without torch: torch-import fails, every benchmark skips with the import error", async () => {
  // A venv of Debian's python3 without its site-packages, not the python3 on PATH: that one has
  // torch where .ci/run installed python3-torch, and not where pyenv's python3 comes first.
  const [pythonWithoutTorch] = makeVenv("gpuprep-payload-notorch-");
  const payload = await runPayload(pythonWithoutTorch, { only: ["benchmarks"] });
  const report = judgePayload(payload, kb, { transport: "local" });
  assert.equal(find(report.items, "check.torch-import").status, "fail");
  assert.match(find(report.items, "check.torch-import").reason, /No module named 'torch'/);
  assert.match(find(report.items, "bench.matmul").reason, /torch does not import/);
});

test("CPU test mode runs every benchmark path with checked results and honest figures", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const payload = await runPayload(DEBIAN_PYTHON, { device: "cpu", only: ["benchmarks"] });
  const results = Object.fromEntries(payload.benchmarks.results.map((r) => [r.name, r]));
  assert.deepEqual(Object.keys(results).sort(), [
    "features",
    "kernels",
    "matmul",
    "membw",
    "nccl",
    "sdpa",
    "transfer",
  ]);
  // torch 1.13 exposes none of the feature matrix's formats: each cell says why, nothing is called.
  const features = results.features?.data as {
    cells: Array<{ feature: string; available: boolean; reason: string }>;
  };
  assert.deepEqual(
    features.cells.map((c) => [c.feature, c.available]),
    [
      ["fp8-e4m3", false],
      ["fp8-e5m2", false],
      ["int8", false],
      ["mxfp8", false],
      ["nvfp4", false],
    ],
  );
  assert.match(features.cells[2]?.reason ?? "", /torch 1\.13.* has no torch\._int_mm/);
  // The kernel capture profiles each matmul precision: on the CPU the aten operator that ran.
  const kernels = results.kernels?.data as { ops: Array<{ op: string; kernels: Array<{ name: string }> }> };
  const matmulOps = kernels.ops.filter((o) => o.op === "matmul");
  assert.equal(matmulOps.length, 2);
  for (const op of matmulOps)
    assert.ok(
      op.kernels.some((k) => k.name === "aten::mm"),
      JSON.stringify(op),
    );
  const matmul = results.matmul?.data as {
    cases: Array<{ ok: boolean; relError: number; tflops: number; reps: number }>;
  };
  for (const c of matmul.cases) {
    assert.equal(c.ok, true);
    assert.ok(c.relError > 0 && c.relError < 2e-2, `rel error ${c.relError}`);
    assert.ok(c.tflops > 0 && c.reps >= 10);
  }
  const membw = results.membw?.data as { ok: boolean; gbps: number; bytes: number; bytesMoved: number };
  assert.equal(membw.ok, true);
  assert.equal(membw.bytesMoved, 2 * membw.bytes, "a copy counts read + write");
  // torch 1.13 has no SDPA: the reason says so instead of a crash.
  assert.match(String((results.sdpa?.data as { error: string }).error), /no scaled_dot_product_attention/);
  // Two real processes all-reduce over gloo: bus bandwidth = algbw * 2(n-1)/n.
  const nccl = results.nccl?.data as {
    worldSize: number;
    sizes: Array<{ algbwGBs: number; busbwGBs: number }>;
  };
  assert.equal(nccl.worldSize, 2);
  const row = nccl.sizes[0] as { algbwGBs: number; busbwGBs: number };
  assert.ok(Math.abs(row.busbwGBs - row.algbwGBs * 1) < 1e-9);
});

test("a benchmark process that runs out of time leaves a failure naming what it was doing", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const payload = await runPayload(DEBIAN_PYTHON, {
    device: "cpu",
    only: ["nccl", "matmul"],
    timeouts: { bench: 2 },
  });
  assert.equal(payload.benchmarks.run?.status, "timeout");
  const report = judgePayload(payload, kb, { transport: "local" });
  const failed = report.items.filter((i) => i.group === "benchmark" && i.status === "fail");
  assert.ok(failed.length >= 1, "unfinished benchmarks are failures");
  assert.ok(
    failed.every((i) => /timeout: no answer within 2s/.test(i.reason)),
    JSON.stringify(failed),
  );
});

test("--model config.json without transformers: the MFU step is skipped saying so, nothing loaded", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const config = join(FIXTURES, "..", "..", "..", "bench", "device", "models", "llama-134m.json");
  const payload = await runPayload(DEBIAN_PYTHON, { device: "cpu", only: ["mfu"], model: config });
  assert.equal(payload.model, null, "a config alone is not a weights file to load");
  const report = judgePayload(payload, kb, { transport: "local" });
  const mfu = find(report.items, "bench.mfu");
  assert.equal(mfu.status, "skip");
  assert.match(mfu.reason, /transformers does not import here/);
});

test("torch 2 + transformers: a real training step on the CPU test mode, FLOPs per token from the model", async (t) => {
  if (needs(t, TORCH2_PYTHON)) return;
  const config = join(FIXTURES, "models", "tiny-llama", "config.json");
  const payload = await runPayload(TORCH2_PYTHON_PATH, {
    device: "cpu",
    only: ["mfu"],
    model: config,
    seqLen: 32,
    batch: 2,
  });
  const r = payload.mfu?.result;
  if (r?.kind === "no-transformers") return t.skip(r.error ?? "transformers is not installed there");
  assert.ok(r && !r.error, JSON.stringify(payload.mfu));
  // 2 layers of q, k, v, o (64x64) and gate, up, down (64x176), plus the 64x512 head.
  assert.equal(r.matmulWeights, 2 * (4 * 64 * 64 + 3 * 64 * 176) + 64 * 512);
  assert.equal(r.flopsPerToken, 6 * (r.matmulWeights ?? 0) + 12 * 2 * 64 * 32);
  assert.equal(r.tokensPerStep, 64);
  assert.ok((r.tokensPerSecond ?? 0) > 0 && r.lossFinite === true);
  const report = judgePayload(payload, kb, { transport: "local" });
  assert.equal(find(report.items, "bench.mfu").status, "info");
  assert.equal(find(report.items, "bench.mfu.attention").provenance?.backend, "flash");
});
