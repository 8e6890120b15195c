/**
 * Named fleets for the fleet rules' firing and silent cases (rule-cases.ts), each built from the
 * real captures by derive.ts and health-derive.ts, which name every field they change.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ProbeOutputSchema, type Facts } from "../../src/facts/schema.js";
import type { MergeOptions } from "../../src/fleet/merge.js";
import { packagePolicy } from "../../src/fleet/packages.js";
import type { NodeResult } from "../../src/fleet/types.js";
import type { Rule } from "../../src/findings/types.js";
import { loadCapture } from "../doctor/captures.js";
import { driver, gpu, nccl, nodeFrom, torch, visibleDevices, type Derivation } from "./derive.js";
import { captured, kernelLogWithXids, NVLINK_ERRORS, standIns, unhealthyXml } from "./health-derive.js";

export interface Scenario {
  results: NodeResult[];
  options?: Partial<MergeOptions>;
}

const PROBE = join(import.meta.dirname, "..", "..", "src", "probe", "probe.py");
type Health = NonNullable<Facts["host"]["gpuHealth"]>;
const healthCache = new Map<string, Health>();

/** The real probe's --gpu-health on stand-in nvidia-smi and dmesg replaying the outputs (memoised). */
export function probedHealth(kind: "healthy" | "sick"): Health {
  const known = healthCache.get(kind);
  if (known) return known;
  const dir =
    kind === "healthy"
      ? standIns({ xml: captured("smi-q.xml"), nvlink: "", kernelLog: captured("kernel-log.txt") })
      : standIns({ xml: unhealthyXml(), nvlink: NVLINK_ERRORS, kernelLog: kernelLogWithXids() });
  const run = spawnSync("/usr/bin/python3", [PROBE, "--fast", "--gpu-health"], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${dir}:/usr/bin:/bin` },
  });
  const health = ProbeOutputSchema.parse(JSON.parse(run.stdout)).host.gpuHealth;
  if (!health) throw new Error(`probe --gpu-health gave no health: ${run.stderr}`);
  healthCache.set(kind, health);
  return health;
}

/** host.gpuHealth set to the probe's reading of `kind`, then `edit` applied to a copy of it. */
export const health =
  (kind: "healthy" | "sick", edit: (h: Health) => void = () => {}): Derivation =>
  (f) => {
    const copy = structuredClone(probedHealth(kind));
    edit(copy);
    f.host.gpuHealth = copy;
  };

const h100 = () => loadCapture("h100-healthy");
const names = (n: number) => Array.from({ length: n }, (_, i) => `g${i + 1}`);
/** Four H100 nodes, node i (0-based) changed by changes[i]. */
function fleet(...changes: Derivation[][]): NodeResult[] {
  const capture = h100();
  return names(4).map((n, i) => nodeFrom(capture, n, ...(changes[i] ?? [])));
}
const bad = (node: string, status: NodeResult["status"], reason: string): NodeResult => ({
  node,
  status,
  reason,
  facts: null,
  durationMs: null,
});

/** python.distributions: the entry named `name` removed, or its version set. */
const dist =
  (name: string, version: string | null): Derivation =>
  (f) => {
    const list = f.python.distributions;
    const i = list.findIndex((d) => d.normalizedName === name);
    if (version === null) list.splice(i, 1);
    else if (i >= 0) list[i] = { ...list[i]!, version };
    else
      list.push({
        name,
        normalizedName: name,
        version,
        location: list[0]?.location ?? "/",
        installer: "pip",
        pathIndex: 4,
      });
  };

const throwing: Rule = {
  id: "always-throws",
  title: "A rule that throws",
  severity: "error",
  check() {
    throw new Error("boom");
  },
};

export const SCENARIOS: Record<string, () => Scenario> = {
  healthy: () => ({ results: fleet() }),
  "healthy-with-gpu-health": () => ({
    results: fleet([health("healthy")], [health("healthy")], [health("healthy")], [health("healthy")]),
  }),
  "driver-550": () => ({
    results: fleet([], [], [driver("550.54.15", "12.4")], [driver("550.54.15", "12.4")]),
  }),
  "torch-2.10-nccl": () => ({ results: fleet([], [], [], [torch("2.10.0+cu128", "12.8"), nccl("2.27.3")]) }),
  pascal: () => ({ results: fleet([], [], [], [gpu("NVIDIA GeForce GTX 1080 Ti", "6.1")]) }),
  "visible-devices-empty": () => ({ results: fleet([], [], [visibleDevices("")]) }),
  "python-numpy-cpu": () => ({
    results: fleet(
      [],
      [(f) => void (f.python.interpreter.executable = "/home/me/.pyenv/shims/python3")],
      [(f) => void (f.python.numpy = f.python.numpy && { ...f.python.numpy, version: "1.26.4" })],
      [(f) => void (f.host.cpuArch = "aarch64")],
    ),
  }),
  "extension-and-binaries": () => ({
    results: fleet(
      [],
      [],
      [(f) => void (f.python.extensions[0] = { ...f.python.extensions[0]!, version: "3.5.0" })],
      [(f) => void (f.binaries.files[0] = { ...f.binaries.files[0]!, sass: ["sm_80"] })],
    ),
  }),
  "packages-differ": () => ({
    results: fleet(
      [],
      [],
      [dist("torchvision", null), dist("torchvision", null)],
      [dist("execnet", "2.0.0")],
    ),
  }),
  "packages-differ-ignored": () => ({
    results: fleet([], [], [], [dist("execnet", "2.0.0")]),
    options: { packages: packagePolicy(["exec*"]) },
  }),
  "gfd-labels": () => {
    const results = fleet();
    results[0]!.labels = { "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1" };
    results[1]!.labels = { "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "1" };
    return { results };
  },
  "node-states": () => ({
    results: [
      ...fleet().slice(0, 2),
      bad("d1", "down", "Slurm reports it drained (bad gpu); not asked"),
      bad("u1", "unreachable", "ssh: connect to host u1 port 22: Connection refused"),
      bad("h1", "hung", "killed at the 60s per-node limit"),
      bad(
        "f1",
        "failed",
        "python3 cannot start there (exit 127): error while loading shared libraries: libpython3.11.so.1.0",
      ),
      bad("x1", "garbage", "printed no gpuprep probe result"),
    ],
  }),
  "all-down": () => ({
    results: [bad("d1", "down", "in maintenance reservation maint; not asked"), bad("d2", "down", "drained")],
  }),
  "gpu-health-sick": () => ({
    results: fleet([health("healthy")], [health("healthy")], [health("sick")], [health("healthy")]),
  }),
  "gpu-health-pages-dcgm": () => ({
    results: fleet(
      [health("healthy")],
      [
        health("healthy", (h) => {
          h.gpus[0]!.retiredPages = { singleBit: 2, doubleBit: 0, pending: true };
          h.gpus[0]!.eccAggregate = { correctable: 177, uncorrectable: 1 };
          h.dcgm = { status: "ok", overall: "Failure", exitCode: 0, output: "Overall Health: Failure" };
        }),
      ],
    ).slice(0, 2),
  }),
  "allreduce-ran": () => ({
    results: fleet().slice(0, 2),
    options: {
      allreduce: {
        leftOut: [],
        result: {
          nodes: ["g1", "g2"],
          backend: "gloo",
          world: 2,
          sizes: [{ bytes: 65536, seconds: 0.001, algbwGBs: 0.06, busbwGBs: 0.06 }],
          correct: true,
          errors: {},
        },
      },
    },
  }),
  "allreduce-not-run": () => ({
    results: fleet().slice(0, 2),
    options: { allreduce: { leftOut: [{ node: "g2", why: "torch is not installed" }], result: null } },
  }),
  "diagnosis-throws": () => ({ results: fleet().slice(0, 1), options: { rules: [throwing] } }),
  "validate-failed": () => ({
    results: fleet().slice(0, 2),
    options: { validateFailures: new Map([["g2", "hung: killed at the 900s per-node limit"]]) },
  }),
};
