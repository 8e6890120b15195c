/**
 * The CUDA binary-compatibility rules: which code object runs on which GPU, and which driver
 * runs which CUDA runtime. Pure functions; the tables they need come from the knowledge base.
 *
 * Sources:
 * - cubin (SASS) runs on the same major compute capability with an equal or higher minor:
 *   https://docs.nvidia.com/cuda/blackwell-compatibility-guide/ and
 *   https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility
 * - PTX is JIT-compiled by the driver for any GPU of equal or higher capability:
 *   https://docs.nvidia.com/cuda/cuda-c-programming-guide/#application-compatibility
 * - arch-specific 'a' code runs only on that exact capability; family-specific 'f' code on the same
 *   major with equal or higher minor:
 *   https://developer.nvidia.com/blog/nvidia-blackwell-and-nvidia-cuda-12-9-introduce-family-specific-architecture-features/
 * - minor-version compatibility of the runtime with older drivers of the same major:
 *   https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
 */
import { compareDriverVersions, type DriverVersion } from "../vocabulary/driver-version.js";
import { rowDriver } from "./driver.js";
import type { ComputeCapability } from "../vocabulary/compute-capability.js";

// The capability type and its parse and format live in the vocabulary; re-exported here, where the
// library's users and the KB's modules have always found them.
export {
  compareCapability,
  type ComputeCapability,
  formatComputeCapability,
  parseComputeCapability,
  smDigits,
  smName,
} from "../vocabulary/compute-capability.js";

export interface CodeTarget {
  kind: "sass" | "ptx";
  major: number;
  minor: number;
  /** "" plain, "a" arch-specific, "f" family-specific. */
  suffix: "" | "a" | "f";
  /** As written: sm_90a, compute_120 ... */
  name: string;
}

/** "sm_90a" / "compute_120" / "sm_100f" into a CodeTarget; null for anything else. */
export function parseCodeTarget(name: string): CodeTarget | null {
  const match = /^(sm|compute)_(\d{2,3})([af]?)$/.exec(name.trim());
  if (!match) return null;
  const digits = match[2] as string;
  return {
    kind: match[1] === "sm" ? "sass" : "ptx",
    major: Number(digits.slice(0, -1)),
    minor: Number(digits.slice(-1)),
    suffix: (match[3] ?? "") as "" | "a" | "f",
    name: name.trim(),
  };
}

export type RunVerdict =
  | { runs: true; how: "sass"; target: string }
  | { runs: true; how: "ptx-jit"; target: string }
  | { runs: false; how: "none"; reason: string };

/**
 * Capabilities whose GPUs do not run cubins built for a lower minor of the same major, despite
 * the general rule: Jetson Orin (8.7) and Thor under CUDA 12 (10.1). PyTorch's own check encodes
 * this (https://github.com/pytorch/pytorch/pull/166185), and torch 2.9.1 cu128 (sm_100 cubins)
 * fails on Thor with "no kernel image is available" (https://github.com/OpenRAL/openral/pull/167).
 */
const SASS_MINOR_EXCEPTIONS: Record<string, string[]> = { "8.7": ["8.0", "8.6"], "10.1": ["10.0"] };

/** Can one code object run on a device of this capability, and how. */
export function canRunTarget(target: CodeTarget, device: ComputeCapability): RunVerdict {
  const deviceKey = `${device.major}.${device.minor}`;
  const targetKey = `${target.major}.${target.minor}`;
  const exact = target.major === device.major && target.minor === device.minor;
  const sameMajorUp = target.major === device.major && device.minor >= target.minor;
  if (target.kind === "sass") {
    if (target.suffix === "a") {
      return exact
        ? { runs: true, how: "sass", target: target.name }
        : {
            runs: false,
            how: "none",
            reason: `${target.name} is arch-specific code: it runs only on ${targetKey}`,
          };
    }
    if (!sameMajorUp) {
      return {
        runs: false,
        how: "none",
        reason: `${target.name} SASS runs only on ${target.major}.x GPUs of minor >= ${target.minor}`,
      };
    }
    if (!exact && (SASS_MINOR_EXCEPTIONS[deviceKey] ?? []).includes(targetKey)) {
      return {
        runs: false,
        how: "none",
        reason: `${deviceKey} is a Tegra part that does not run ${targetKey} cubins`,
      };
    }
    return { runs: true, how: "sass", target: target.name };
  }
  // PTX: the driver compiles it for the device at load time.
  if (target.suffix === "a") {
    return exact
      ? { runs: true, how: "ptx-jit", target: target.name }
      : {
          runs: false,
          how: "none",
          reason: `${target.name} PTX is arch-specific: only ${targetKey} can JIT it`,
        };
  }
  if (target.suffix === "f") {
    return sameMajorUp
      ? { runs: true, how: "ptx-jit", target: target.name }
      : { runs: false, how: "none", reason: `${target.name} PTX is family-specific to ${target.major}.x` };
  }
  const newerOrEqual = device.major > target.major || sameMajorUp;
  return newerOrEqual
    ? { runs: true, how: "ptx-jit", target: target.name }
    : { runs: false, how: "none", reason: `${target.name} PTX needs a GPU of capability >= ${targetKey}` };
}

export interface CoverageVerdict {
  /** sass: a cubin runs natively; ptx-jit: only through the driver's JIT; none: no code can run. */
  how: "sass" | "ptx-jit" | "none";
  /** The targets that make it run (best first), or empty. */
  via: string[];
}

/**
 * Verdict for a whole set of code objects (a library's fatbin, or torch's get_arch_list()).
 * The runtime prefers a matching cubin and falls back to PTX (CUDA programming guide,
 * "Application Compatibility").
 */
export function coverageFor(targets: string[], device: ComputeCapability): CoverageVerdict {
  const sass: string[] = [];
  const ptx: string[] = [];
  for (const name of targets) {
    const target = parseCodeTarget(name);
    if (!target) continue;
    const verdict = canRunTarget(target, device);
    if (verdict.runs && verdict.how === "sass") sass.push(name);
    else if (verdict.runs && verdict.how === "ptx-jit") ptx.push(name);
  }
  if (sass.length > 0) return { how: "sass", via: sortTargetsDesc(sass) };
  if (ptx.length > 0) return { how: "ptx-jit", via: sortTargetsDesc(ptx) };
  return { how: "none", via: [] };
}

function sortTargetsDesc(names: string[]): string[] {
  const key = (n: string) => {
    const t = parseCodeTarget(n);
    return t ? t.major * 100 + t.minor * 10 + (t.suffix === "a" ? 2 : t.suffix === "f" ? 1 : 0) : 0;
  };
  return [...names].sort((a, b) => key(b) - key(a));
}

export type DriverSupport =
  /** The driver is at least the toolkit's own GA driver: every feature works. */
  | "native"
  /** Same CUDA major, driver at or above the minor-version-compatibility floor: runs, PTX JIT of newer PTX does not. */
  | "minor-compat"
  /** Driver too old: needs a newer driver (or the cuda-compat forward-compatibility package on datacenter GPUs). */
  | "unsupported";

export interface ToolkitDriverFloor {
  version: string;
  minDriverLinux: string;
  minorCompatMinDriverLinux: string | null;
}

/** Whether a Linux driver runs a CUDA runtime of this toolkit version. */
export function driverSupport(driver: DriverVersion, toolkit: ToolkitDriverFloor): DriverSupport {
  if (compareDriverVersions(driver, rowDriver(toolkit.minDriverLinux)) >= 0) return "native";
  if (
    toolkit.minorCompatMinDriverLinux &&
    compareDriverVersions(driver, rowDriver(toolkit.minorCompatMinDriverLinux)) >= 0
  )
    return "minor-compat";
  return "unsupported";
}
