/**
 * The decision oracle's own reading of the knowledge base: the raw rows of src/kb/data/*.json (read
 * directly, not through src/kb), and CUDA's documented compatibility rules written out again here,
 * small and apart from src/kb/compat.ts:
 * - a cubin for X.y runs on X.z with z >= y, never across majors, and on a Tegra part only on its
 *   own capability ("Binary compatibility is supported only for the desktop. It is not supported
 *   for Tegra": CUDA C++ Programming Guide, Binary Compatibility; the Ada compatibility guide's
 *   "a cubin generated for compute capability 8.6 is supported to run on ... 8.9");
 * - PTX for X.y is JIT-compiled on any capability >= X.y (Programming Guide, PTX Compatibility);
 *   `a` code (sm_90a) only on its own capability, `f` code on its major at an equal or higher minor
 *   (NVIDIA's "family-specific architecture features" post for CUDA 12.9);
 * - a driver runs a CUDA runtime natively from that toolkit's GA driver, and under minor-version
 *   compatibility from the major's floor (docs.nvidia.com/deploy/cuda-compatibility), where PTX
 *   newer than the driver cannot be JIT-compiled; a bare branch ("580") is that branch's newest patch.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type CpuArch = "x86_64" | "aarch64";

export interface GpuRow {
  name: string;
  computeCapability: string;
  hostCpuArch: CpuArch | null;
  minDriverLinux?: string | null;
  variants?: string[] | null;
}
export interface ArchRow {
  computeCapability: string;
  tegra: boolean;
  driverFloor?: { minDriverLinux: string; lastDriverBranch: string | null };
}
export interface ToolkitRow {
  version: string;
  minDriverLinux: string;
  minorCompatMinDriverLinux: string | null;
  sassTargets?: string[];
}
export interface TorchBuildRow {
  torch: string;
  variant: string;
  platform: "linux-x86_64" | "linux-aarch64";
  cuda: string | null;
  archList: string[];
  pythons: string[];
  pypiDefault: boolean;
}
export interface NgcRow {
  tag: string;
  torch: string;
  cuda: string;
  minDriverLinux: string | null;
  python: string | null;
  numpy: string | null;
  platforms: { amd64: boolean | null; arm64: boolean | null; igpu: boolean | null };
  gpus: {
    minComputeCapability: string | null;
    exceptions: Array<{ computeCapability: string }>;
    runs: Array<{ computeCapability: string; cpuArch: CpuArch | null; result: string }>;
  };
  packages: Record<string, string>;
  archLists: Array<{ platform: "amd64" | "arm64"; archList: string[] }>;
  jetson: { jetpack: string; computeCapabilities: string[] } | null;
}
export interface SystemRow {
  name: string;
  aliases: string[];
  gpu: string;
  driver: string | null;
}
export interface WheelPythonsRow {
  package: string;
  releases: string[];
  platforms: string[];
  pythons: string[];
  anyPythonFrom?: string;
}

export interface Tables {
  gpus: GpuRow[];
  archs: ArchRow[];
  toolkits: ToolkitRow[];
  torchBuilds: TorchBuildRow[];
  ngcImages: NgcRow[];
  systems: SystemRow[];
  wheelPythons: WheelPythonsRow[];
}

/** The files the oracle reads, each a `{ table, rows }` document. */
export const TABLE_FILES = {
  gpus: "gpus.json",
  archs: "archs.json",
  toolkits: "cuda-toolkits.json",
  torchBuilds: "torch-builds.json",
  ngcImages: "ngc-images.json",
  systems: "systems.json",
  wheelPythons: "wheel-pythons.json",
} as const;

export function readTables(dataDir: string): Tables {
  const rows = (file: string): unknown[] =>
    (JSON.parse(readFileSync(join(dataDir, file), "utf8")) as { rows: unknown[] }).rows;
  return {
    gpus: rows(TABLE_FILES.gpus) as GpuRow[],
    archs: rows(TABLE_FILES.archs) as ArchRow[],
    toolkits: rows(TABLE_FILES.toolkits) as ToolkitRow[],
    torchBuilds: rows(TABLE_FILES.torchBuilds) as TorchBuildRow[],
    ngcImages: rows(TABLE_FILES.ngcImages) as NgcRow[],
    systems: rows(TABLE_FILES.systems) as SystemRow[],
    wheelPythons: rows(TABLE_FILES.wheelPythons) as WheelPythonsRow[],
  };
}

const parsed = new Map<string, number[]>();

/** "580.65.06" -> [580, 65, 6]; "2.9.0a0+x" -> [2, 9, 0]: the leading dotted numbers (read once per string). */
export function numbers(version: string): number[] {
  let parts = parsed.get(version);
  if (!parts) {
    const head = /^\d+(?:\.\d+)*/.exec(version.trim())?.[0] ?? "";
    parts = head === "" ? [] : head.split(".").map(Number);
    parsed.set(version, parts);
  }
  return parts;
}

/** Numeric order of dotted numbers, a missing part counting as 0. */
export function compareNumbers(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function compareDotted(a: string, b: string): number {
  return compareNumbers(numbers(a), numbers(b));
}

/** "2.9.0a0+x" -> "2.9", "12.0.1" -> "12.0". */
export function majorMinor(version: string): string {
  return numbers(version).slice(0, 2).join(".");
}

/** A driver as given: a bare branch ("580") stands for its newest patch. */
export function driverNumbers(driver: string): number[] {
  const parts = numbers(driver);
  return parts.length === 1 ? [parts[0] ?? 0, Infinity] : parts;
}

export function driverAtLeast(driver: string, floor: string): boolean {
  return compareNumbers(driverNumbers(driver), numbers(floor)) >= 0;
}

export interface Capability {
  major: number;
  minor: number;
  tegra: boolean;
}

interface CodeObject {
  ptx: boolean;
  major: number;
  minor: number;
  suffix: string;
}

function codeObject(name: string): CodeObject | null {
  const m = /^(sm|compute)_(\d+)(\d)([af]?)$/.exec(name);
  if (!m) return null;
  return { ptx: m[1] === "compute", major: Number(m[2]), minor: Number(m[3]), suffix: m[4] ?? "" };
}

function cubinRuns(code: CodeObject, gpu: Capability): boolean {
  const exact = code.major === gpu.major && code.minor === gpu.minor;
  if (code.suffix === "a" || gpu.tegra) return exact;
  return code.major === gpu.major && gpu.minor >= code.minor;
}

function ptxJits(code: CodeObject, gpu: Capability): boolean {
  if (code.suffix === "a") return code.major === gpu.major && code.minor === gpu.minor;
  if (code.suffix === "f") return code.major === gpu.major && gpu.minor >= code.minor;
  return gpu.major > code.major || (gpu.major === code.major && gpu.minor >= code.minor);
}

/** What an arch list (torch's get_arch_list, a wheel's) gives a GPU: a cubin, PTX only, or nothing. */
export function archListCovers(archList: string[], gpu: Capability): "sass" | "ptx" | "none" {
  const codes = archList.map(codeObject).filter((c): c is CodeObject => c !== null);
  if (codes.some((c) => !c.ptx && cubinRuns(c, gpu))) return "sass";
  if (codes.some((c) => c.ptx && ptxJits(c, gpu))) return "ptx";
  return "none";
}

/**
 * Does a CUDA version compile a cubin that runs on the GPU: its nvcc target list, or, for a
 * version without one (13.1-13.3), the listed versions of its major just below and above it when
 * they agree. Unknown counts as no.
 */
export function cudaCompilesFor(toolkits: ToolkitRow[], cuda: string, gpu: Capability): boolean {
  const version = majorMinor(cuda);
  const compiles = (row: ToolkitRow) =>
    archListCovers(
      (row.sassTargets ?? []).map((sm) => `sm_${sm}`),
      gpu,
    ) === "sass";
  const own = toolkits.find((row) => row.version === version);
  if (own?.sassTargets) return compiles(own);
  const major = numbers(version)[0];
  const listed = toolkits
    .filter((row) => row.sassTargets && numbers(row.version)[0] === major)
    .sort((a, b) => compareDotted(a.version, b.version));
  const below = listed.filter((row) => compareDotted(row.version, version) < 0).pop();
  const above = listed.find((row) => compareDotted(row.version, version) > 0);
  return below !== undefined && above !== undefined && compiles(below) && compiles(above);
}

/** How a driver runs a CUDA runtime: natively, under minor-version compatibility, or not. */
export function driverRunsCuda(driver: string, toolkit: ToolkitRow): "native" | "minor" | "no" {
  if (driverAtLeast(driver, toolkit.minDriverLinux)) return "native";
  if (toolkit.minorCompatMinDriverLinux && driverAtLeast(driver, toolkit.minorCompatMinDriverLinux))
    return "minor";
  return "no";
}
