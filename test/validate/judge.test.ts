/** Judging rules on real captures: architecture coverage from the H100's torch facts, PCIe from its nvidia-smi. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { judgePayload } from "../../src/validate/judge.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { judgeRatio, MATMUL_LIMITS } from "../../src/validate/thresholds.js";
import type { Payload } from "../../src/validate/payload.js";
import { FIXTURES, cpuModePayload, savedReports } from "./fixtures.js";

const kb = loadKnowledgeBase();
const h100 = JSON.parse(readFileSync(join(FIXTURES, "..", "h100-raw", "torch.txt"), "utf8")) as {
  arch_list: string[];
  name: string;
};

/** The CPU-mode payload with the H100's torch arch list and one device of the given capability. */
function withDevice(capability: [number, number]): Payload {
  const payload = structuredClone(cpuModePayload());
  const env = payload.env.result;
  assert.ok(env);
  env.archList = h100.arch_list;
  env.devices = [{ index: 0, name: h100.name, capability, totalMemoryBytes: 80 << 30 }];
  return payload;
}

test("torch 2.11 cu130's arch list: SASS for H100, B300, RTX 50xx / GB10; nothing for Thor or Orin", () => {
  const cases: Array<[[number, number], string, RegExp]> = [
    [[9, 0], "pass", /SASS via sm_90/],
    [[10, 3], "pass", /SASS via sm_100/],
    [[12, 1], "pass", /SASS via sm_120/],
    // The reason is doctor's torch-arch-not-covered message (src/judge/torch-arch.ts).
    [[11, 0], "fail", /none of which can run on .*\(compute capability 11\.0/],
    [[8, 7], "fail", /none of which can run on .*\(compute capability 8\.7/],
  ];
  for (const [cc, status, reason] of cases) {
    const item = judgePayload(withDevice(cc), kb, { transport: "local" }).items.find(
      (i) => i.id === "check.arch",
    );
    assert.equal(item?.status, status, `${cc.join(".")}: ${item?.reason}`);
    assert.match(item?.reason ?? "", reason);
  }
});

// Was a warning with its own words; now doctor's tf32-disabled verdict (info) and message (src/judge/tf32.ts).
test("TF32 off on an sm_80+ GPU is reported (info) in doctor's words, with doctor's rule id", () => {
  const item = judgePayload(withDevice([9, 0]), kb, { transport: "local" }).items.find(
    (i) => i.id === "check.tf32",
  );
  assert.equal(item?.status, "info");
  assert.equal(item?.ruleId, "tf32-disabled");
  assert.match(item?.reason ?? "", /use full-precision FP32 instead of TF32 tensor cores/);
});

test("host transfers are held against the H100's PCIe gen5 x16 link from nvidia-smi", () => {
  const payload = withDevice([9, 0]);
  const csv =
    readFileSync(join(FIXTURES, "..", "h100-raw", "query.csv"), "utf8")
      .trim()
      .split("\n")[1] ?? "";
  const cells = csv.split(",").map((c) => c.trim());
  const gpu = {
    index: 0,
    name: cells[1] as string,
    pcie_link_gen_max: Number(cells[9]),
    pcie_link_width_max: Number(cells[10]),
    pcie_link_gen_current: Number(cells[11]),
    pcie_link_width_current: Number(cells[12]),
  };
  payload.nvidiaSmi = { status: "ok", error: null, gpus: [gpu] };
  let items = judgePayload(payload, kb, { transport: "local" }).items;
  const h2d = items.find((i) => i.id === "bench.transfer.h2d");
  assert.equal(h2d?.reference?.value, 3.938 * 16);
  assert.match(h2d?.reason ?? "", /of PCIe gen5 x16 \(63\.0 GB\/s per direction\)/);
  assert.equal(items.find((i) => i.id === "bench.pcie-width")?.status, "pass");
  // The same card trained at x8: a warning that says so.
  payload.nvidiaSmi.gpus[0] = { ...gpu, pcie_link_width_current: 8 };
  items = judgePayload(payload, kb, { transport: "local" }).items;
  assert.equal(items.find((i) => i.id === "bench.pcie-width")?.status, "warn");
  assert.match(items.find((i) => i.id === "bench.pcie-width")?.reason ?? "", /trained at x8 of x16/);
});

test("ratio limits: pass at the limit, warn below it, fail under the warn limit and on NaN", () => {
  assert.equal(judgeRatio(MATMUL_LIMITS.pass, MATMUL_LIMITS), "pass");
  assert.equal(judgeRatio(MATMUL_LIMITS.pass - 0.01, MATMUL_LIMITS), "warn");
  assert.equal(judgeRatio(MATMUL_LIMITS.warn - 0.01, MATMUL_LIMITS), "fail");
  assert.equal(judgeRatio(Number.NaN, MATMUL_LIMITS), "fail");
});

test("every saved report judges again to the same items (the judging is a pure function of the payload)", () => {
  for (const { file, report } of savedReports()) {
    const again = judgePayload(report.payload, kb, {
      transport: report.transport,
      createdAt: report.createdAt,
    });
    assert.deepEqual(
      again.items.map((i) => [i.id, i.status]),
      report.items.map((i) => [i.id, i.status]),
      file,
    );
    for (const item of again.items) assert.ok(item.reason.length > 0, `${item.id} says why`);
  }
});

test("SDPA on torch 2.13: per-backend speedups, unavailable backends with torch's reason, one fused verdict", () => {
  const items = judgePayload(cpuModePayload("2.13"), kb, { transport: "local" }).items;
  const base = "bench.sdpa.bfloat16.2x4x128x32";
  const flash = items.find((i) => i.id === `${base}.flash`);
  assert.equal(flash?.status, "info");
  assert.equal(flash?.measured?.unit, "x manual");
  assert.match(flash?.reason ?? "", /^\d+\.\d\dx manual, /);
  const cudnn = items.find((i) => i.id === `${base}.cudnn`);
  assert.equal(cudnn?.status, "skip");
  assert.match(cudnn?.reason ?? "", /^unavailable: RuntimeError: No viable backend/);
  const fused = items.find((i) => i.id === "bench.sdpa.fused");
  assert.match(
    fused?.reason ?? "",
    /^best: flash \d+\.\d\dx over manual attention at bfloat16 B2 H4 S128 D32/,
  );
  assert.equal(fused?.reference?.value, 1.2, "no GPU: the least strict minimum");
});

test("SDPA with no fused backend is a failure: it falls back to math", () => {
  const payload = structuredClone(cpuModePayload("2.13"));
  const sdpa = payload.benchmarks.results.find((r) => r.name === "sdpa")?.data as {
    cases: Array<{ backends: Record<string, { available: boolean; reason?: string }> }>;
  };
  const flash = sdpa.cases[0]?.backends.flash;
  assert.ok(flash);
  sdpa.cases[0]!.backends.flash = { available: false, reason: "test: flash switched off" };
  const fused = judgePayload(payload, kb, { transport: "local" }).items.find(
    (i) => i.id === "bench.sdpa.fused",
  );
  assert.equal(fused?.status, "fail");
  assert.match(fused?.reason ?? "", /SDPA falls back to math/);
});
