/**
 * Fleet nodes derived from real captures (test/fixtures/facts) by changing named fields, so a
 * merge can be tested (and benchmarked) on many nodes without a cluster. Each derivation says
 * exactly which fields it changes; everything else is the capture as it was recorded.
 */
import type { Facts } from "../../src/facts/schema.js";
import type { NodeResult } from "../../src/fleet/types.js";

export type Derivation = (facts: Facts) => void;

export function nodeFrom(capture: Facts, node: string, ...changes: Derivation[]): NodeResult {
  const facts = structuredClone(capture);
  // target.kind/ref and host.hostname: the node's name, as a fleet run records it.
  facts.target = { kind: "slurm", ref: node, python: facts.target.python };
  facts.host.hostname = node;
  for (const change of changes) change(facts);
  return { node, status: "ok", reason: null, facts, durationMs: null };
}

/** host.nvidia.driverVersion and host.nvidia.cudaVersion. */
export const driver =
  (version: string, cuda: string): Derivation =>
  (f) => {
    f.host.nvidia.driverVersion = version;
    f.host.nvidia.cudaVersion = cuda;
  };

/** host.nvidia.gpus[].name/computeCapability and torchLive.result.devices[].name/capability. */
export const gpu =
  (name: string, cc: string): Derivation =>
  (f) => {
    for (const g of f.host.nvidia.gpus) Object.assign(g, { name, computeCapability: cc });
    const [major, minor] = cc.split(".").map(Number) as [number, number];
    for (const d of f.python.torchLive.result?.devices ?? [])
      Object.assign(d, { name, capability: [major, minor] });
  };

/** python.torch.version/cudaVersion and torchLive.result.version/cudaBuilt. */
export const torch =
  (version: string, cuda: string): Derivation =>
  (f) => {
    if (f.python.torch) Object.assign(f.python.torch, { version, cudaVersion: cuda });
    if (f.python.torchLive.result) Object.assign(f.python.torchLive.result, { version, cudaBuilt: cuda });
  };

/** torchLive.result.ncclVersion. */
export const nccl =
  (version: string): Derivation =>
  (f) => {
    if (f.python.torchLive.result) f.python.torchLive.result.ncclVersion = version;
  };

/** python.env.CUDA_VISIBLE_DEVICES. */
export const visibleDevices =
  (value: string): Derivation =>
  (f) => {
    f.python.env["CUDA_VISIBLE_DEVICES"] = value;
  };

/** A small deterministic generator, so a benchmark's fleet is the same on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * What differs between real nodes of one environment (issue 26 item 5): every GPU's UUID; the
 * probe's, torch's, each extension's and the binary scan's durations; MemAvailable and /dev/shm
 * free; capturedAt; the driver module's line with its build date (a DKMS build per node); and,
 * when the node has passive GPU health, its corrected ECC counters and whether the GPU idles.
 */
export const realisticVariation =
  (random: () => number): Derivation =>
  (f) => {
    const hex = (n: number) =>
      Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");
    for (const g of f.host.nvidia.gpus) g.uuid = `GPU-${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
    f.python.probe.durationMs = Math.round(3000 + random() * 3000);
    f.python.torchLive.durationMs = Math.round(2500 + random() * 3000);
    for (const e of f.python.extensions) e.durationMs = Math.round(2000 + random() * 4000);
    f.binaries.durationMs = Math.round(2000 + random() * 2500);
    if (f.host.memTotalBytes)
      f.host.memAvailableBytes = Math.round(f.host.memTotalBytes * (0.5 + random() * 0.45));
    if (f.host.shm.sizeBytes)
      f.host.shm.freeBytes = Math.round(f.host.shm.sizeBytes * (0.8 + random() * 0.2));
    const day = 1 + Math.floor(random() * 28);
    f.capturedAt = `2026-11-${String(day).padStart(2, "0")}T${String(Math.floor(random() * 24)).padStart(2, "0")}:${String(Math.floor(random() * 60)).padStart(2, "0")}:00.000Z`;
    if (f.host.nvidia.kernelModule)
      f.host.nvidia.kernelModule = `${f.host.nvidia.kernelModule.replace(/\s+\S*\s*$/, "")} built 2026-10-${String(day).padStart(2, "0")} ${String(Math.floor(random() * 24)).padStart(2, "0")}:${String(Math.floor(random() * 60)).padStart(2, "0")}`;
    const health = f.host.gpuHealth;
    if (health)
      for (const g of health.gpus) {
        g.uuid = f.host.nvidia.gpus[0]?.uuid ?? g.uuid;
        g.eccAggregate = { correctable: Math.floor(random() * 200), uncorrectable: 0 };
        g.clockEventReasons = random() < 0.5 ? ["gpu_idle"] : [];
      }
  };
