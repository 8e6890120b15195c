/**
 * Conda builds of PyTorch (conda-forge, the `pytorch` channel) on a GPU + driver + platform: which
 * carry code the GPU runs, best first. The same CUDA rules as the wheels (kb/compat.ts).
 */
import {
  coverageFor,
  driverSupport,
  formatComputeCapability,
  smName,
  type ComputeCapability,
  type DriverSupport,
} from "../compat.js";
import type { CondaTorchBuildRow, CudaToolkitRow } from "../types.js";
import { versionParts } from "../../util/version.js";
import { rankBuilds } from "./torch.js";
import { newestOfBranch, type DriverVersion } from "../../vocabulary/driver-version.js";

export interface CondaTorchQuery {
  computeCapability: ComputeCapability;
  driverVersion: DriverVersion;
  platform: CondaTorchBuildRow["platform"];
  channel?: CondaTorchBuildRow["channel"];
  /** The highest CUDA the environment's `__cuda` virtual package allows ("12", "13.0"); leave out for any. */
  maxCuda?: string;
}

/** How one conda build fares on one GPU and driver. */
export interface CondaTorchVerdict {
  build: CondaTorchBuildRow;
  runs: "sass" | "ptx-jit" | "none" | "cpu";
  /** The arch-list entries that make it run, best first. */
  via: string[];
  /** null for CPU builds or a CUDA the toolkit table lacks. */
  driver: DriverSupport | null;
  /** One line: why it runs or not. */
  reason: string;
}

export function judgeCondaTorchBuild(
  build: CondaTorchBuildRow,
  toolkits: CudaToolkitRow[],
  cc: ComputeCapability,
  driverVersion: DriverVersion | null,
): CondaTorchVerdict {
  if (!build.cuda) return { build, runs: "cpu", via: [], driver: null, reason: "a CPU-only build" };
  const toolkit = toolkits.find((row) => row.version === build.cuda);
  const driver = toolkit && driverVersion ? driverSupport(newestOfBranch(driverVersion), toolkit) : null;
  const coverage = coverageFor(build.archList, cc);
  const sm = smName(cc);
  const archs = build.archList.join(", ");
  if (coverage.how === "none")
    return { build, runs: "none", via: [], driver, reason: `no code for ${sm}: the build has ${archs}` };
  if (coverage.how === "ptx-jit")
    return {
      build,
      runs: "ptx-jit",
      via: coverage.via,
      driver,
      reason: `no ${sm} SASS: only JIT compilation of ${coverage.via[0]} PTX runs it (slow first start, untuned kernels)`,
    };
  return {
    build,
    runs: "sass",
    via: coverage.via,
    driver,
    reason: `${coverage.via[0]} SASS runs natively on ${formatComputeCapability(cc)}`,
  };
}

/**
 * A CUDA build pins `cuda-version`, which asks `__cuda` for the CUDA major only ("Major version is
 * lower bound", conda-forge/cuda-version-feedstock@ae97761f recipe/meta.yaml): `__cuda` 12.0
 * admits a CUDA 12.9 build and refuses a 13.0 one.
 */
function cudaAllowed(cuda: string, maxCuda: string | undefined): boolean {
  if (!maxCuda) return true;
  return (versionParts(cuda)[0] ?? 0) <= (versionParts(maxCuda)[0] ?? 0);
}

/** CUDA builds that run here (SASS or PTX JIT, driver able to run their CUDA), best first. */
export function condaTorchBuildsFor(
  rows: CondaTorchBuildRow[],
  toolkits: CudaToolkitRow[],
  query: CondaTorchQuery,
): CondaTorchVerdict[] {
  return rows
    .filter(
      (row) =>
        row.platform === query.platform &&
        (!query.channel || row.channel === query.channel) &&
        row.cuda !== null &&
        !row.superseded &&
        cudaAllowed(row.cuda, query.maxCuda),
    )
    .map((row) => judgeCondaTorchBuild(row, toolkits, query.computeCapability, query.driverVersion))
    .filter(
      (verdict) =>
        (verdict.runs === "sass" && verdict.driver !== "unsupported") ||
        // JIT of PTX needs the CUDA's own driver: minor-version compatibility does not cover it.
        (verdict.runs === "ptx-jit" && verdict.driver === "native"),
    )
    .sort((a, b) => rankBuilds(a, b));
}
