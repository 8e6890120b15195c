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
import { needs, PYTHON3_TORCH } from "../support/needs.js";

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
  assert.equal(find(report.items, "check.extension.torchvision").status, "skip");
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
  const payload = await runPayload("python3", { only: ["benchmarks"] });
  const report = judgePayload(payload, kb, { transport: "local" });
  assert.equal(find(report.items, "check.torch-import").status, "fail");
  assert.match(find(report.items, "check.torch-import").reason, /No module named 'torch'/);
  assert.match(find(report.items, "bench.matmul").reason, /torch does not import/);
});

test("CPU test mode runs every benchmark path with checked results and honest figures", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const payload = await runPayload(DEBIAN_PYTHON, { device: "cpu", only: ["benchmarks"] });
  const results = Object.fromEntries(payload.benchmarks.results.map((r) => [r.name, r]));
  assert.deepEqual(Object.keys(results).sort(), ["matmul", "membw", "nccl", "sdpa", "transfer"]);
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
