/** The few facts every report header shows: what machine and environment this is. */
import type { Facts } from "../facts/schema.js";

export interface MachineSummary {
  target: string;
  os: string;
  cpuArch: string;
  gpus: string[];
  driver: string;
  driverCuda: string;
  python: string;
  torch: string;
  numpy: string;
}

export function machineSummary(facts: Facts): MachineSummary {
  const { host, python } = facts;
  const nvidia = host.nvidia;
  const live = python.torchLive.status === "ok" ? python.torchLive.result : null;
  const torch = python.torch;
  const interp = python.interpreter;
  return {
    target: facts.target.kind === "local" ? "local" : `${facts.target.kind} ${facts.target.ref ?? ""}`.trim(),
    os: host.os.prettyName ?? `${host.os.system} ${host.os.release}`,
    cpuArch: host.cpuArch,
    gpus: nvidia.gpus.map(
      (g) =>
        `${g.index}: ${g.name}${g.computeCapability ? ` (sm_${g.computeCapability.replace(".", "")})` : ""}` +
        (g.memoryTotalMiB !== null ? `, ${Math.round(g.memoryTotalMiB / 1024)} GiB` : "") +
        (g.migMode?.toLowerCase() === "enabled" ? ", MIG" : ""),
    ),
    driver:
      nvidia.driverVersion ?? (nvidia.status === "ok" ? "unknown" : `none (nvidia-smi ${nvidia.status})`),
    driverCuda: nvidia.cudaVersion ?? "-",
    python: `${interp.version} ${interp.executable} (${interp.kind})`,
    torch: torch
      ? `${torch.version}, CUDA ${torch.cudaVersion ?? "none (CPU-only)"}` +
        (live
          ? `, cuda available: ${live.cudaAvailable ? `yes (${live.deviceCount} device${live.deviceCount === 1 ? "" : "s"})` : "no"}`
          : "")
      : "not installed",
    numpy: python.numpy?.version ?? "not installed",
  };
}
