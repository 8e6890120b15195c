/**
 * Which drivers a GPU works with, apart from any CUDA: the first driver that supports it (its own,
 * where a source states one, else its architecture's: the GA driver of the first CUDA toolkit NVIDIA
 * names for it) and, for old architectures, the last driver branch that still does. And the driver
 * to plan for when a named target is given without one.
 */
import type { ArchRow, GpuRow, Source, SystemRow } from "../types.js";
import { rowDriver } from "../driver.js";
import {
  compareDriverVersions,
  formatDriverVersion,
  newestOfBranch,
  type DriverVersion,
} from "../../vocabulary/driver-version.js";

export interface GpuDriverFloor {
  /** The GPU row's name. */
  gpu: string;
  computeCapability: string;
  /** The lowest driver that supports this GPU; null where none is known (a Jetson: JetPack brings it). */
  minDriverLinux: string | null;
  /**
   * gpu-stated: NVIDIA states it for this GPU (HGX B200); gpu-shipped: the branch its system ships,
   * none earlier known (GB10); architecture: the first toolkit's GA driver for its architecture
   * (derived); jetpack: a Jetson, whose driver comes with JetPack; null: none known.
   */
  basis: "gpu-stated" | "gpu-shipped" | "architecture" | "jetpack" | null;
  derived: boolean;
  /** The last driver branch that supports this GPU ("580" for Volta), or null. */
  lastDriverBranch: string | null;
  reason: string;
  sources: Source[];
}

/** The GPU-specific floor among a row and, for a name several rows share, its variants: the highest. */
function gpuOwnFloor(rows: GpuRow[]): { row: GpuRow; driver: DriverVersion } | null {
  const stated = rows.flatMap((row) =>
    row.minDriverLinux ? [{ row, driver: rowDriver(row.minDriverLinux) }] : [],
  );
  stated.sort((a, b) => compareDriverVersions(b.driver, a.driver));
  return stated[0] ?? null;
}

/**
 * The driver floor of a GPU: the higher of its own (or its variants') stated floor and its
 * architecture's derived one, with the last supporting branch where NVIDIA names one.
 */
export function minimumDriverFor(gpu: GpuRow, arch: ArchRow | null, variants: GpuRow[] = []): GpuDriverFloor {
  const base = { gpu: gpu.name, computeCapability: gpu.computeCapability };
  if (gpu.tegra || arch?.tegra)
    return {
      ...base,
      minDriverLinux: null,
      basis: "jetpack",
      derived: false,
      lastDriverBranch: null,
      reason: `${gpu.name} is a Jetson part: its driver comes with its JetPack release, not a driver branch`,
      sources: arch?.sources ?? gpu.sources,
    };
  const ownFloor = gpuOwnFloor([gpu, ...variants]);
  const floor = arch?.driverFloor ?? null;
  const lastDriverBranch = floor?.lastDriverBranch ?? null;
  const archSources = arch && floor ? arch.sources.filter((source) => source.url === floor.source) : [];
  if (ownFloor && (!floor || compareDriverVersions(ownFloor.driver, rowDriver(floor.minDriverLinux)) >= 0)) {
    const own = ownFloor.row;
    const shipped = own.minDriverBasis === "shipped";
    return {
      ...base,
      minDriverLinux: own.minDriverLinux as string,
      basis: shipped ? "gpu-shipped" : "gpu-stated",
      derived: false,
      lastDriverBranch,
      reason: shipped
        ? `${own.name} ships with the R${ownFloor.driver.branch} branch and no earlier driver with support for it is sourced`
        : `${own.name} needs ${own.minDriverLinux} or newer (stated for this GPU)`,
      sources: [...own.sources, ...archSources],
    };
  }
  if (floor)
    return {
      ...base,
      minDriverLinux: floor.minDriverLinux,
      basis: "architecture",
      derived: true,
      lastDriverBranch,
      reason: `derived: ${arch?.architecture ?? "its architecture"} (${gpu.computeCapability}) is supported from CUDA ${floor.firstCuda}, whose driver is ${floor.minDriverLinux}${lastDriverBranch ? `; the R${lastDriverBranch} branch is the last that supports it` : ""}`,
      sources: archSources,
    };
  return {
    ...base,
    minDriverLinux: null,
    basis: null,
    derived: false,
    lastDriverBranch: null,
    reason: `no driver floor is sourced for ${gpu.name} (${gpu.computeCapability})`,
    sources: gpu.sources,
  };
}

export interface GpuDriverCheck {
  /** too-old: below the GPU's floor; too-new: past the last branch that supports it; unknown: no floor known. */
  verdict: "supported" | "too-old" | "too-new" | "unknown";
  floor: GpuDriverFloor;
  reason: string;
}

/** Whether a driver supports a GPU at all, whatever CUDA runs on it. A bare branch ("570") is its newest patch. */
export function checkDriverForGpu(floor: GpuDriverFloor, given: DriverVersion): GpuDriverCheck {
  const driver = newestOfBranch(given);
  const driverVersion = formatDriverVersion(given);
  if (floor.minDriverLinux && compareDriverVersions(driver, rowDriver(floor.minDriverLinux)) < 0)
    return {
      verdict: "too-old",
      floor,
      reason: `driver ${driverVersion} is too old for ${floor.gpu}: it needs ${floor.minDriverLinux} or newer (${floor.reason})`,
    };
  const last = floor.lastDriverBranch;
  if (last && driver.branch > Number(last))
    return {
      verdict: "too-new",
      floor,
      reason: `driver ${driverVersion} is past the R${last} branch, the last that supports ${floor.gpu}`,
    };
  if (!floor.minDriverLinux) return { verdict: "unknown", floor, reason: floor.reason };
  return {
    verdict: "supported",
    floor,
    reason: `driver ${driverVersion} supports ${floor.gpu} (${floor.minDriverLinux} or newer${last ? `, up to the R${last} branch` : ""})`,
  };
}

/** The driver to plan for on a named target when no --driver is given, and why. */
export interface TargetDriver {
  /** The driver to plan for; null where neither the system's nor the GPU's is known. */
  driver: string | null;
  /** system-ships: the named system's own driver; gpu-floor: the lowest driver its GPU needs. */
  basis: "system-ships" | "gpu-floor" | null;
  system: SystemRow | null;
  floor: GpuDriverFloor | null;
  reason: string;
  sources: Source[];
}

/**
 * A named system's driver where a source gives it (DGX Spark: 580.82.09); else the lowest driver
 * its GPU needs (RTX 5070 Ti: 570.26, the R570 branch); else null with the reason.
 */
export function driverForTarget(system: SystemRow | null, floor: GpuDriverFloor | null): TargetDriver {
  if (system?.driver)
    return {
      driver: system.driver,
      basis: "system-ships",
      system,
      floor,
      reason: `${system.name} ships driver ${system.driver} (${system.software})`,
      sources: system.sources,
    };
  if (floor?.minDriverLinux)
    return {
      driver: floor.minDriverLinux,
      basis: "gpu-floor",
      system,
      floor,
      reason: `${system ? `the driver ${system.name} ships is not sourced; ` : ""}the lowest driver ${floor.gpu} needs: ${floor.reason}`,
      sources: floor.sources,
    };
  return {
    driver: null,
    basis: null,
    system,
    floor,
    reason: system
      ? `the driver ${system.name} ships is not sourced, and ${floor?.reason ?? "its GPU has no known floor"}`
      : (floor?.reason ?? "no GPU and no system of that name"),
    sources: system?.sources ?? floor?.sources ?? [],
  };
}
