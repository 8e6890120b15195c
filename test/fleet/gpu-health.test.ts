/**
 * Passive GPU health: the real probe (--gpu-health) reading the real H200 capture through
 * stand-in nvidia-smi and dmesg, checked against NVML's own answer from the same machine
 * (nvml.json); then unhealthy values derived from it (health-derive.ts) judged by the fleet's
 * node rules and as drift between nodes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ProbeOutputSchema, type Facts } from "../../src/facts/schema.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { mergeFleet } from "../../src/fleet/merge.js";
import { loadCapture } from "../doctor/captures.js";
import { nodeFrom } from "./derive.js";
import { captured, kernelLogWithXids, NVLINK_ERRORS, standIns, unhealthyXml } from "./health-derive.js";

const PROBE = join(import.meta.dirname, "..", "..", "src", "probe", "probe.py");

function probeHealth(dir: string): NonNullable<Facts["host"]["gpuHealth"]> {
  const run = spawnSync("/usr/bin/python3", [PROBE, "--fast", "--gpu-health"], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${dir}:/usr/bin:/bin` },
  });
  assert.equal(run.status, 0, run.stderr);
  const parsed = ProbeOutputSchema.parse(JSON.parse(run.stdout));
  assert.ok(parsed.host.gpuHealth, "--gpu-health adds host.gpuHealth");
  return parsed.host.gpuHealth;
}

test("the H200 capture read by the probe agrees with NVML read on the same machine", () => {
  const health = probeHealth(
    standIns({
      xml: captured("smi-q.xml"),
      nvlink: captured("nvlink-e.txt"),
      kernelLog: captured("kernel-log.txt"),
    }),
  );
  const nvml = JSON.parse(captured("nvml.json")) as {
    gpus: Array<{
      uuid: string;
      ecc: Record<string, number>;
      remappedRows: number[];
      clocksEventReasons: number;
    }>;
  };
  const [gpu] = health.gpus;
  const [truth] = nvml.gpus;
  assert.equal(health.status, "ok");
  assert.equal(gpu?.uuid, truth?.uuid);
  assert.deepEqual(gpu?.eccVolatile, {
    correctable: truth?.ecc["corrected.volatile"],
    uncorrectable: truth?.ecc["uncorrected.volatile"],
  });
  assert.deepEqual(gpu?.eccAggregate, {
    correctable: truth?.ecc["corrected.aggregate"],
    uncorrectable: truth?.ecc["uncorrected.aggregate"],
  });
  // nvmlDeviceGetRemappedRows: (correctable, uncorrectable, pending, failure).
  const [corr, unc, pending, failure] = truth?.remappedRows ?? [];
  assert.deepEqual(gpu?.remappedRows, {
    correctable: corr,
    uncorrectable: unc,
    pending: pending === 1,
    failure: failure === 1,
  });
  // NVML's clock event reasons bit 0x1 is "GPU idle", the only one nvidia-smi shows Active.
  assert.equal(truth?.clocksEventReasons, 1);
  assert.deepEqual(gpu?.clockEventReasons, ["gpu_idle"]);
  assert.deepEqual(gpu?.fabric, { state: null, status: null }, "N/A: no NVSwitch");
  assert.equal(gpu?.nvlinkErrors, null, "nvidia-smi nvlink -e printed nothing: no NVLink");
  assert.deepEqual(health.xids, { status: "ok", error: null, events: [] });
  assert.equal(health.dcgm.status, "not-installed");
});

test("unhealthy values are read as they are; an unreadable kernel log is said so", () => {
  const health = probeHealth(
    standIns({ xml: unhealthyXml(), nvlink: NVLINK_ERRORS, kernelLog: kernelLogWithXids() }),
  );
  const [gpu] = health.gpus;
  assert.deepEqual(gpu?.eccVolatile, { correctable: 0, uncorrectable: 2 });
  assert.equal(gpu?.remappedRows?.pending, true);
  assert.deepEqual(gpu?.clockEventReasons.sort(), ["gpu_idle", "hw_slowdown"]);
  assert.deepEqual(gpu?.fabric, { state: "In Progress", status: null });
  assert.deepEqual(gpu?.nvlinkErrors, { "Replay Errors": 0, "Recovery Errors": 0, "CRC Errors": 12 });
  assert.deepEqual(
    health.xids.events.map((e) => [e.pci, e.code, e.count]),
    [
      ["0000:00:06", 63, 1],
      ["0000:00:06", 79, 1],
    ],
  );
  const denied = probeHealth(standIns({ xml: captured("smi-q.xml"), nvlink: "", kernelLog: null }));
  assert.equal(denied.xids.status, "unreadable");
  assert.match(denied.xids.error ?? "", /Operation not permitted/);
});

test("health judged per node and as drift: one sick node among healthy ones", () => {
  const healthy = probeHealth(
    standIns({ xml: captured("smi-q.xml"), nvlink: "", kernelLog: captured("kernel-log.txt") }),
  );
  const sick = probeHealth(
    standIns({ xml: unhealthyXml(), nvlink: NVLINK_ERRORS, kernelLog: kernelLogWithXids() }),
  );
  const h100 = loadCapture("h100-healthy");
  const withHealth = (health: typeof healthy) => (f: Facts) => {
    f.host.gpuHealth = health;
  };
  const nodes = ["g1", "g2", "g3", "g4"].map((n) =>
    nodeFrom(h100, n, withHealth(n === "g3" ? sick : healthy)),
  );
  const report = mergeFleet(nodes, loadKnowledgeBase(), { transport: "test", mode: "doctor" });
  const node = Object.fromEntries(report.nodeFindings.map((f) => [f.ruleId, [f.severity, f.nodes]]));
  assert.deepEqual(node["fleet-gpu-ecc-uncorrectable"], ["error", ["g3"]]);
  assert.deepEqual(node["fleet-gpu-row-remap"], ["warning", ["g3"]]);
  assert.deepEqual(node["fleet-gpu-throttled"], ["warning", ["g3"]]);
  assert.deepEqual(node["fleet-gpu-fabric"], ["error", ["g3"]]);
  assert.deepEqual(node["fleet-gpu-nvlink-errors"], ["warning", ["g3"]]);
  assert.deepEqual(node["fleet-gpu-xid"], ["error", ["g3"]], "Xid 79: the GPU fell off the bus");
  const drift = report.fleetFindings.find((f) => f.ruleId === "fleet-gpu-health-drift");
  assert.deepEqual(drift?.nodes, ["g3"]);
  assert.equal(report.groups.length, 2, "the same software, but g3's GPU sets it apart");
  assert.match(report.groups[1]?.fingerprint.gpuHealth ?? "", /row remap pending a GPU reset/);
  // Healthy everywhere: no health finding at all.
  const fine = mergeFleet(
    ["g1", "g2"].map((n) => nodeFrom(h100, n, withHealth(healthy))),
    loadKnowledgeBase(),
    { transport: "test", mode: "doctor" },
  );
  assert.deepEqual(
    [...fine.fleetFindings, ...fine.nodeFindings].filter((f) => f.ruleId.startsWith("fleet-gpu-")),
    [],
  );
});
