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
