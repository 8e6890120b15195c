/**
 * Which PyTorch builds run on a GPU + driver + CPU architecture + Python, best first, with the
 * install command for each. A build runs when its wheel carries code the GPU can execute (SASS
 * of the same major, or PTX the driver can JIT) and the driver runs its CUDA runtime.
 */
import {
  coverageFor,
  driverSupport,
  formatComputeCapability,
  smName,
  type ComputeCapability,
  type DriverSupport,
} from "../compat.js";
import type { CudaToolkitRow, TorchBuildRow } from "../types.js";
import { compareVersions, majorMinor } from "../../util/version.js";
import { rowDriver } from "../driver.js";
import {
  compareDriverVersions,
  formatDriverVersion,
  newestOfBranch,
  type DriverVersion,
} from "../../vocabulary/driver-version.js";

export type CpuArch = "x86_64" | "aarch64";

export interface TorchBuildQuery {
  computeCapability: ComputeCapability;
  /** The GPU by name, where known: its own driver floor applies, not its capability's highest. */
  gpuName?: string;
  driverVersion: DriverVersion;
  cpuArch: CpuArch;
  /** "3.12" or "3.12.3"; leave out to accept any Python. */
  python?: string;
}

export interface TorchBuildChoice {
  build: TorchBuildRow;
  runs: "sass" | "ptx-jit";
  /** The arch-list entries that make it run, best first. */
  via: string[];
  driver: DriverSupport;
  pip: string;
  uv: string;
  reasons: string[];
}

export interface TorchBuildRejection {
  build: TorchBuildRow;
  reason: string;
}

export interface TorchBuildEvaluation {
  choices: TorchBuildChoice[];
  rejected: TorchBuildRejection[];
}

export function platformOf(cpuArch: CpuArch): TorchBuildRow["platform"] {
  return cpuArch === "aarch64" ? "linux-aarch64" : "linux-x86_64";
}

function pythonMatches(build: TorchBuildRow, python: string | undefined): boolean {
  if (!python) return true;
  const wanted = python.endsWith("t") ? python : majorMinor(python);
  return build.pythons.includes(wanted);
}

/**
 * `pip` and `uv pip` commands that install this build's torch (series or exact version). The
 * index is left out for PyPI's own build unless `explicitIndex` asks for it (PyTorch's index
 * serves the same wheel, and naming it keeps the command right when PyPI's default changes).
 */
export function installCommands(
  build: TorchBuildRow,
  torchVersion?: string,
  explicitIndex = false,
): { pip: string; uv: string } {
  const pin = torchVersion ? `torch==${torchVersion.split("+")[0]}` : `torch==${build.torch}.*`;
  const fromPypi = build.pypiDefault && !explicitIndex;
  const index = fromPypi ? "" : ` --index-url ${build.indexUrl}`;
  return { pip: `pip install "${pin}"${index}`, uv: `uv pip install "${pin}"${index}` };
}

/** What the build ranking reads: a wheel choice here, or a conda build's verdict (conda-torch.ts). */
interface RankedBuild {
  runs: string;
  driver: DriverSupport | null;
  build: { torch: string; cuda: string | null };
}

/**
 * Wheels and conda builds are ranked alike, best first: SASS over PTX JIT, newer torch, then what
 * `prefer` says (the wheels: PyPI's default first), a driver that runs the CUDA natively over
 * minor-version compatibility, newer CUDA.
 */
export function rankBuilds<T extends RankedBuild>(a: T, b: T, prefer?: (a: T, b: T) => number): number {
  if (a.runs !== b.runs) return a.runs === "sass" ? -1 : 1;
  const byTorch = compareVersions(b.build.torch, a.build.torch);
  if (byTorch !== 0) return byTorch;
  const preferred = prefer?.(a, b) ?? 0;
  if (preferred !== 0) return preferred;
  if (a.driver !== b.driver) return a.driver === "native" ? -1 : 1;
  return compareVersions(b.build.cuda ?? "0", a.build.cuda ?? "0");
}

function pypiDefaultFirst(a: TorchBuildChoice, b: TorchBuildChoice): number {
  if (a.build.pypiDefault === b.build.pypiDefault) return 0;
  return a.build.pypiDefault ? -1 : 1;
}

export function evaluateTorchBuilds(
  builds: TorchBuildRow[],
  toolkits: CudaToolkitRow[],
  query: TorchBuildQuery,
  gpuMinDriver: string | null = null,
): TorchBuildEvaluation {
  const cc = query.computeCapability;
  const platform = platformOf(query.cpuArch);
  const driver = newestOfBranch(query.driverVersion);
  const choices: TorchBuildChoice[] = [];
  const rejected: TorchBuildRejection[] = [];
  for (const build of builds) {
    if (build.platform !== platform) continue;
    const reason = rejectionReason(build, toolkits, query, cc, driver, gpuMinDriver);
    if (typeof reason === "string") rejected.push({ build, reason });
    else choices.push(reason);
  }
  choices.sort((a, b) => rankBuilds(a, b, pypiDefaultFirst));
  return { choices, rejected };
}

function rejectionReason(
  build: TorchBuildRow,
  toolkits: CudaToolkitRow[],
  query: TorchBuildQuery,
  cc: ComputeCapability,
  driver: DriverVersion,
  gpuMinDriver: string | null,
): TorchBuildChoice | string {
  if (!build.cuda) return "CPU-only build";
  if (!pythonMatches(build, query.python))
    return `no wheel for Python ${query.python} (wheels: ${build.pythons.join(", ")})`;
  if (build.archList.length === 0) return "arch list unknown (seen on the wheel index only)";
  if (gpuMinDriver && compareDriverVersions(driver, rowDriver(gpuMinDriver)) < 0)
    return `driver ${formatDriverVersion(query.driverVersion)} is older than ${gpuMinDriver}, the first driver that supports this GPU`;
  const coverage = coverageFor(build.archList, cc);
  const archs = build.archList.join(", ");
  if (coverage.how === "none")
    return `no kernel image for ${smName(cc)}: the wheel has ${archs} and no PTX this GPU can JIT`;
  const toolkit = toolkits.find((row) => row.version === build.cuda);
  if (!toolkit) return `CUDA ${build.cuda} is not in the toolkit table`;
  const support = driverSupport(driver, toolkit);
  if (support === "unsupported")
    return `driver ${formatDriverVersion(query.driverVersion)} is too old for CUDA ${build.cuda} (needs ${toolkit.minDriverLinux}, or ${toolkit.minorCompatMinDriverLinux ?? "-"} under minor-version compatibility)`;
  if (coverage.how === "ptx-jit" && support !== "native")
    return `only PTX (${coverage.via.join(", ")}) covers this GPU, and JIT of CUDA ${build.cuda} PTX needs driver ${toolkit.minDriverLinux} or newer`;
  const reasons = [
    coverage.how === "sass"
      ? `${coverage.via[0] ?? ""} SASS runs natively on compute capability ${formatComputeCapability(cc)}`
      : `runs through PTX JIT of ${coverage.via[0] ?? ""} (slow first start, no tuned kernels)`,
    support === "native"
      ? `driver ${formatDriverVersion(query.driverVersion)} runs CUDA ${build.cuda} natively`
      : `driver ${formatDriverVersion(query.driverVersion)} runs CUDA ${build.cuda} under minor-version compatibility`,
  ];
  if (build.pypiDefault) reasons.push("this is what a plain `pip install torch` gets from PyPI");
  return {
    build,
    runs: coverage.how,
    via: coverage.via,
    driver: support,
    ...installCommands(build),
    reasons,
  };
}
