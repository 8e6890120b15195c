/** The merge on nodes derived from real H100 captures (derive.ts says which fields change). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadCapture } from "../doctor/captures.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { dedupeFindings, mergeFleet } from "../../src/fleet/merge.js";
import { renderFleetText } from "../../src/report/fleet-text.js";
import { fleetJUnitSuites } from "../../src/report/fleet-junit.js";
import { makeStyle } from "../../src/report/style.js";
import type { NodeResult } from "../../src/fleet/types.js";
import { driver, gpu, nccl, nodeFrom, torch, visibleDevices } from "./derive.js";

const kb = loadKnowledgeBase();
const h100 = loadCapture("h100-healthy");
const names = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => `gpu${String(i + from).padStart(2, "0")}`);

test("2 of 16 nodes on driver 550: drift judged with the KB (torch 2.11+cu130 fails there), per-node findings merged", () => {
  const nodes = names(16).map((n, i) =>
    i >= 14 ? nodeFrom(h100, n, driver("550.54.15", "12.4")) : nodeFrom(h100, n),
  );
  const report = mergeFleet(nodes, kb, { transport: "test", mode: "doctor" });
  assert.equal(report.groups.length, 2);
  assert.deepEqual(report.groups[1]?.nodes, ["gpu15", "gpu16"]);
  const drift = report.fleetFindings.find((f) => f.ruleId === "fleet-driver-drift");
  assert.equal(drift?.severity, "error");
  assert.deepEqual(drift?.nodes, ["gpu15", "gpu16"]);
  assert.match(
    drift?.message ?? "",
    /^2 of 16 nodes have driver 550\.54\.15; torch 2\.11\.0\+cu130 \(CUDA 13\.0, on gpu\[01-16\]\) fails there/,
  );
  const tooOld = report.nodeFindings.filter((f) => f.ruleId === "torch-driver-too-old");
  assert.equal(tooOld.length, 1, "one merged finding, not one per node");
  assert.deepEqual(tooOld[0]?.nodes, ["gpu15", "gpu16"]);
  assert.equal(report.summary.exitCode, 1);
  const healthy = mergeFleet(
    names(4).map((n) => nodeFrom(h100, n)),
    kb,
    { transport: "test", mode: "doctor" },
  );
  assert.equal(healthy.groups.length, 1);
  assert.deepEqual(healthy.fleetFindings, []);
});

test("a GPU the fleet's torch arch list cannot run is an error naming both sides; NCCL and torch drift", () => {
  const nodes = [
    nodeFrom(h100, "a1"),
    nodeFrom(h100, "a2"),
    // A Pascal card (6.1): torch 2.11's list starts at sm_75 and carries no PTX.
    nodeFrom(h100, "p1", gpu("NVIDIA GeForce GTX 1080 Ti", "6.1")),
    nodeFrom(h100, "b1", torch("2.10.0+cu128", "12.8"), nccl("2.27.3")),
    nodeFrom(h100, "c1", visibleDevices("")),
  ];
  const report = mergeFleet(nodes, kb, { transport: "test", mode: "doctor" });
  const byId = new Map(report.fleetFindings.map((f) => [f.ruleId, f]));
  assert.equal(byId.get("fleet-gpu-mix")?.severity, "error");
  assert.deepEqual(byId.get("fleet-gpu-mix")?.nodes, ["p1"]);
  assert.match(byId.get("fleet-gpu-mix")?.message ?? "", /has no kernels for compute capability 6\.1 \(p1\)/);
  assert.deepEqual(byId.get("fleet-torch-drift")?.nodes, ["b1"]);
  assert.deepEqual(byId.get("fleet-nccl-drift")?.nodes, ["b1"]);
  // c1's nvidia-smi lists a GPU that CUDA_VISIBLE_DEVICES="" hides: an error there.
  assert.equal(byId.get("fleet-visible-devices-drift")?.severity, "error");
  assert.deepEqual(byId.get("fleet-visible-devices-drift")?.nodes, ["c1"]);
  const text = renderFleetText(report, makeStyle(false));
  for (const id of ["fleet-gpu-mix", "fleet-torch-drift", "fleet-nccl-drift", "fleet-visible-devices-drift"])
    assert.ok(text.includes(`[${id}]`), id);
});

test("unreachable, down, hung, failed and garbage nodes are results with their own findings; JUnit has one case per node", () => {
  const bad = (node: string, status: NodeResult["status"], reason: string): NodeResult => ({
    node,
    status,
    reason,
    facts: null,
    durationMs: null,
  });
  const nodes = [
    nodeFrom(h100, "n1"),
    bad("n2", "down", "Slurm reports it down*"),
    bad("n3", "hung", "killed at the 60s per-node limit"),
    bad("n4", "unreachable", "launch failed"),
    bad("n5", "failed", "python3 not found"),
    bad("n6", "garbage", "printed no gpuprep probe result"),
  ];
  const report = mergeFleet(nodes, kb, { transport: "test", mode: "doctor" });
  const ids = Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f.nodes]));
  assert.deepEqual(ids, {
    "fleet-node-hung": ["n3"],
    "fleet-node-unreachable": ["n4"],
    "fleet-node-failed": ["n5"],
    "fleet-node-garbage": ["n6"],
    "fleet-node-down": ["n2"],
  });
  assert.deepEqual(report.summary, {
    nodes: 6,
    ok: 1,
    notOk: 5,
    groups: 1,
    errors: 4,
    warnings: 1,
    infos: report.summary.infos,
    exitCode: 1,
  });
  const cases = fleetJUnitSuites(report)[0]?.cases ?? [];
  assert.deepEqual(
    cases.map((c) => [c.name, c.status]),
    [
      ["n1", "pass"],
      ["n2", "skip"],
      ["n3", "fail"],
      ["n4", "fail"],
      ["n5", "fail"],
      ["n6", "fail"],
    ],
  );
});

test("nothing a node sends can crash the merge: 300 randomly mangled snapshots", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const strange = [
    "",
    "x",
    "1e309",
    "-1",
    "NaN",
    "9999999999999999999.0.0",
    "sm_",
    "compute_9999a",
    " ",
    "\u0000",
    "a".repeat(5000),
  ];
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T;
  const nodes: NodeResult[] = [];
  for (let i = 0; i < 300; i++) {
    const n = nodeFrom(h100, `m${i}`);
    const f = n.facts!;
    // Every field the fingerprint and the drift rules read, set to values a broken node could send.
    f.host.nvidia.driverVersion = pick([...strange, null]);
    f.host.nvidia.cudaVersion = pick([...strange, null]);
    for (const g of f.host.nvidia.gpus) g.computeCapability = pick([...strange, null, "9.0"]);
    if (f.python.torch) f.python.torch.cudaVersion = pick([...strange, null]);
    if (f.python.torch) f.python.torch.version = pick(strange);
    if (f.python.torchLive.result) f.python.torchLive.result.archList = [pick(strange), pick(strange)];
    if (f.python.torchLive.result) f.python.torchLive.result.ncclVersion = pick([...strange, null]);
    f.python.env["CUDA_VISIBLE_DEVICES"] = pick(strange);
    if (random() < 0.2) f.host.nvidia.status = "failed";
    nodes.push(n);
  }
  const report = mergeFleet(nodes, kb, { transport: "test", mode: "doctor" });
  assert.equal(report.summary.nodes, 300);
  assert.ok(report.groups.length > 1);
  assert.ok(renderFleetText(report, makeStyle(false)).length > 0);
});

test("one failure measured differently on each node is one finding (issue 26 item 7)", () => {
  const timeout = (ms: number) => (f: Parameters<Parameters<typeof nodeFrom>[2]>[0]) => {
    f.python.torchLive = {
      ...f.python.torchLive,
      status: "timeout",
      durationMs: ms,
      exitCode: null,
      error: null,
      result: null,
    };
  };
  const nodes = [45_000, 46_200, 47_100].map((ms, i) => nodeFrom(h100, `n${i + 1}`, timeout(ms)));
  const report = mergeFleet(nodes, kb, { transport: "test", mode: "doctor" });
  const failed = report.nodeFindings.filter((f) => f.ruleId === "torch-import-failed");
  assert.equal(failed.length, 1);
  assert.deepEqual(failed[0]?.nodes, ["n1", "n2", "n3"]);
  // Findings whose messages differ only in a measured duration merge, giving the range.
  const finding = (seconds: number) => ({
    ...failed[0]!,
    message: `import torch did not finish within ${seconds} s.`,
  });
  const merged = dedupeFindings([
    { node: "a", findings: [finding(45)] },
    { node: "b", findings: [finding(47)] },
    { node: "c", findings: [{ ...finding(46), message: "import torch raised: ImportError" }] },
  ]);
  assert.deepEqual(
    merged.map((f) => [f.message, f.nodes]),
    [
      ["import torch did not finish within 45–47 s.", ["a", "b"]],
      ["import torch raised: ImportError", ["c"]],
    ],
  );
});
