/**
 * A node's fingerprint: the facts that decide whether one job runs the same way there as on
 * the other nodes. Nodes with equal fingerprints form a group; a field whose value differs
 * between groups is drift.
 */
import type { Facts } from "../facts/schema.js";
import type { Fingerprint, FingerprintField } from "./types.js";
import { isCudaToolkitLibrary, ownerOf } from "../rule-helpers/binary-coverage.js";
import { healthSummary } from "./health.js";

export const FINGERPRINT_LABELS: Record<FingerprintField, string> = {
  gpus: "GPU (compute capability)",
  driver: "NVIDIA driver",
  driverCuda: "driver's CUDA",
  cpuArch: "CPU architecture",
  python: "Python",
  torch: "torch",
  torchCuda: "torch's CUDA",
  torchArchList: "torch arch list",
  nccl: "NCCL",
  numpy: "numpy",
  extensions: "extensions",
  binaryCoverage: "extension binaries' targets",
  visibleDevices: "CUDA_VISIBLE_DEVICES",
  gpuHealth: "GPU health",
};

export const NOT_INSTALLED = "not installed";

function gpusOf(facts: Facts): string {
  const nvidia = facts.host.nvidia;
  if (nvidia.status !== "ok")
    return nvidia.status === "not-found" ? "none (no nvidia-smi)" : "none (nvidia-smi failed)";
  if (nvidia.gpus.length === 0) return "none";
  const counts = new Map<string, number>();
  for (const gpu of nvidia.gpus) {
    const key = `${gpu.name}${gpu.computeCapability ? ` (${gpu.computeCapability})` : ""}${gpu.migMode?.toLowerCase() === "enabled" ? " MIG" : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .map(([name, n]) => `${n}x ${name}`)
    .sort()
    .join(", ");
}

function extensionsOf(facts: Facts): string {
  const rows = facts.python.extensions.map(
    (e) =>
      `${e.distribution ?? e.module} ${e.version ?? "?"}${e.status === "ok" || e.status === "skipped" ? "" : ` (${e.status})`}`,
  );
  return rows.length ? [...new Set(rows)].sort().join(", ") : "none";
}

function binaryCoverageOf(facts: Facts): string {
  if (!facts.binaries.scanned) return "not scanned";
  const byOwner = new Map<string, Set<string>>();
  for (const file of facts.binaries.files) {
    // The package directory (torch, xformers, ...), as the coverage rules name owners.
    const owner = file.distribution ?? ownerOf(file.path, facts.python.interpreter.sysPath);
    if (isCudaToolkitLibrary(owner)) continue;
    const set = byOwner.get(owner) ?? new Set<string>();
    for (const target of [...file.sass, ...file.ptx]) set.add(target);
    byOwner.set(owner, set);
  }
  if (byOwner.size === 0) return "no CUDA code";
  return [...byOwner]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([owner, targets]) => `${owner}: ${[...targets].sort().join(" ")}`)
    .join("; ");
}

export function fingerprintOf(facts: Facts): Fingerprint {
  const torch = facts.python.torch;
  const live = facts.python.torchLive.status === "ok" ? facts.python.torchLive.result : null;
  const interp = facts.python.interpreter;
  const cvd = facts.python.env["CUDA_VISIBLE_DEVICES"];
  return {
    gpus: gpusOf(facts),
    driver: facts.host.nvidia.driverVersion ?? "none",
    driverCuda: facts.host.nvidia.cudaVersion ?? "none",
    cpuArch: facts.host.cpuArch,
    python: `${interp.version} ${interp.executable}`,
    torch: torch?.version ?? NOT_INSTALLED,
    torchCuda: torch ? (torch.cudaVersion ?? "none (CPU-only)") : "-",
    torchArchList: live
      ? live.archList.join(" ") || "(empty)"
      : torch
        ? `unknown (torch import ${facts.python.torchLive.status})`
        : "-",
    nccl: live?.ncclVersion ?? "-",
    numpy: facts.python.numpy?.version ?? NOT_INSTALLED,
    extensions: extensionsOf(facts),
    binaryCoverage: binaryCoverageOf(facts),
    visibleDevices: cvd === undefined ? "unset" : JSON.stringify(cvd),
    gpuHealth: healthSummary(facts),
  };
}
