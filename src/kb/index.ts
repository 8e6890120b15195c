/**
 * The one module rules and the planner ask compatibility questions through. They hold no tables
 * of their own.
 */
import { loadPackagedData, type KnowledgeBaseData } from "./load.js";
import type { ArchRow, CudaToolkitRow } from "./types.js";
import { driverSupport, parseComputeCapability, type DriverSupport } from "./compat.js";
import { compareVersions, majorMinor } from "../util/version.js";

export class KnowledgeBase {
  constructor(readonly data: KnowledgeBaseData) {}

  /** The row for a compute capability ("9.0", "sm_90"), or null when we have none. */
  arch(computeCapability: string): ArchRow | null {
    const cc = parseComputeCapability(computeCapability);
    if (!cc) return null;
    return this.data.archs.find((row) => row.computeCapability === `${cc.major}.${cc.minor}`) ?? null;
  }

  /** The toolkit row for a CUDA version ("12.8", "12.8.1"), or null when unknown. */
  cudaToolkit(version: string): CudaToolkitRow | null {
    const key = majorMinor(version);
    return this.data.cudaToolkits.find((row) => row.version === key) ?? null;
  }

  /** Does this Linux driver run a CUDA runtime of this version; null when the version is unknown to us. */
  driverSupportFor(
    driverVersion: string,
    cudaVersion: string,
  ): { support: DriverSupport; toolkit: CudaToolkitRow } | null {
    const toolkit = this.cudaToolkit(cudaVersion);
    if (!toolkit) return null;
    return { support: driverSupport(driverVersion, toolkit), toolkit };
  }

  /** The newest CUDA toolkit this driver runs natively (its own GA driver or newer). */
  newestNativeCuda(driverVersion: string): CudaToolkitRow | null {
    const native = this.data.cudaToolkits.filter(
      (row) => compareVersions(driverVersion, row.minDriverLinux) >= 0,
    );
    native.sort((a, b) => compareVersions(b.version, a.version));
    return native[0] ?? null;
  }
}

let cached: KnowledgeBase | null = null;

/** The packaged knowledge base (loaded once per process). */
export function loadKnowledgeBase(): KnowledgeBase {
  cached ??= new KnowledgeBase(loadPackagedData());
  return cached;
}
