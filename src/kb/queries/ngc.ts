/**
 * Which NGC PyTorch images run on a GPU + driver + CPU architecture, newest first, and which image
 * an installed torch came from. The coverage rule is written out in docs/knowledge-base.md ("NGC
 * images"); a wrong "covers" is worse than "not known", so every path that is not backed by a
 * first-hand run or NVIDIA's own floor says "not covered" and why.
 */
import { coverageFor, driverSupport, parseComputeCapability, type DriverSupport } from "../compat.js";
import type { CudaToolkitRow, NgcCpuArch, NgcGpuRun, NgcImageRow } from "../types.js";
import { compareVersions, majorMinor, versionParts } from "../../util/version.js";
import { effectiveDriver, type CpuArch } from "./torch.js";

export interface NgcImageQuery {
  computeCapability: string;
  driverVersion: string;
  cpuArch: CpuArch;
}

export interface NgcImageVerdict {
  image: NgcImageRow;
  runs: boolean;
  /**
   * How the driver runs the image's CUDA: native (at or above its CUDA's GA driver), minor-compat
   * (at or above the image's floor, below the GA driver), or null: not judged, or the image's CUDA
   * is not in the toolkit table so "native" cannot be told from "minor-compat".
   */
  driver: DriverSupport | null;
  reason: string;
}

/** What the knowledge base adds to a verdict beyond the image and toolkit rows. */
export interface NgcJudgeContext {
  /** Capabilities of Jetson (Tegra iGPU) parts, from the arch table: no floor covers them. */
  tegraCapabilities?: string[];
  /** The lowest driver NVIDIA states for this GPU itself (GPU table), or null. */
  gpuMinDriver?: string | null;
}

export type NgcGpuCoverage =
  { covered: true; rule: "run" | "stated-floor"; detail: string } | { covered: false; detail: string };

const DOCKER_PLATFORM: Record<NgcCpuArch, "amd64" | "arm64"> = { x86_64: "amd64", aarch64: "arm64" };

/** Whether the tag publishes an image for this CPU architecture: true, false, or null (not sourced). */
export function platformPublished(image: NgcImageRow, cpuArch: CpuArch): boolean | null {
  return image.platforms[DOCKER_PLATFORM[cpuArch]];
}

function ccKey(computeCapability: string): string {
  const cc = parseComputeCapability(computeCapability);
  return cc ? `${cc.major}.${cc.minor}` : computeCapability;
}

function describeRun(run: NgcGpuRun): string {
  const where =
    run.cpuArchBasis === "assumed"
      ? `${run.cpuArch}, CPU not stated and taken as x86_64`
      : (run.cpuArch ?? "CPU not stated");
  return `${run.gpu} (${run.computeCapability}, ${where})`;
}

/**
 * Whether an image's build serves a GPU on a CPU architecture. It does when the tag publishes an
 * image for that architecture, the GPU's capability is not a known exception, and either
 * - "run": a first-hand run of this tag on a GPU of that capability and architecture ran, or
 * - "stated-floor": NVIDIA's "compute capability X and later" for the image is at or below it, the
 *   GPU is not a Jetson (Tegra) part, and the image's CUDA compiles SASS that runs on it (its own
 *   capability or a lower minor of the same major, per compat.ts). Without the toolkit's SASS
 *   targets nothing is claimed: "X and later" cannot cover a GPU the toolkit cannot build for.
 */
export function ngcGpuCoverage(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  computeCapability: string,
  cpuArch: CpuArch = "x86_64",
  tegraCapabilities: string[] = [],
): NgcGpuCoverage {
  const key = ccKey(computeCapability);
  const cc = parseComputeCapability(computeCapability);
  const platform = DOCKER_PLATFORM[cpuArch];
  const published = platformPublished(image, cpuArch);
  if (published !== true)
    return {
      covered: false,
      detail:
        published === false
          ? `no linux/${platform} image is published for ${image.tag}`
          : `no source says a linux/${platform} image is published for ${image.tag}`,
    };
  const exception = image.gpus.exceptions.find((entry) => entry.computeCapability === key);
  if (exception)
    return { covered: false, detail: `a known exception for compute capability ${key}: ${exception.note}` };
  const ran = image.gpus.runs.find(
    (run) => run.computeCapability === key && run.result === "ran" && run.cpuArch === cpuArch,
  );
  if (ran)
    return {
      covered: true,
      rule: "run",
      detail: `a first-hand run of ${image.tag} on ${describeRun(ran)} ran`,
    };
  const others = image.gpus.runs.filter((run) => run.computeCapability === key);
  const seen =
    others.length > 0
      ? `; runs on ${key} seen elsewhere: ${others.map((run) => `${describeRun(run)} ${run.result}`).join("; ")}`
      : "";
  if (tegraCapabilities.includes(key))
    return {
      covered: false,
      detail: `${key} is a Jetson (Tegra iGPU) part: only a first-hand run of ${image.tag} on it counts, and none on ${cpuArch} is recorded${seen}`,
    };
  const floor = image.gpus.minComputeCapability;
  if (!floor)
    return {
      covered: false,
      detail: `no first-hand run of ${image.tag} on ${key} ${cpuArch} is recorded and NVIDIA's GPU floor for it is not sourced${seen}`,
    };
  if (!cc || compareVersions(key, floor) < 0)
    return {
      covered: false,
      detail: `compute capability ${key} is below the stated minimum ${floor}${seen}`,
    };
  if (!toolkit?.sassTargets)
    return {
      covered: false,
      detail: `${key} is at or above the stated minimum ${floor}, but the SASS targets of CUDA ${image.cuda} are not in the toolkit table, so coverage is not claimed${seen}`,
    };
  const sass = coverageFor(
    toolkit.sassTargets.map((sm) => `sm_${sm}`),
    cc,
  );
  if (sass.how !== "sass")
    return {
      covered: false,
      detail: `${key} is at or above the stated minimum ${floor}, but CUDA ${toolkit.version} compiles no SASS that runs on ${key} (no sm_${cc.major}x at or below it)`,
    };
  return {
    covered: true,
    rule: "stated-floor",
    detail: `${key} is at or above the stated minimum ${floor} and CUDA ${toolkit.version} compiles ${sass.via[0]} SASS, which runs on it`,
  };
}

/** The driver floor an image has, with what it rests on, for messages. */
export function ngcDriverFloor(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
): { floor: string; basis: string } | null {
  if (image.minDriverLinux) {
    const basis =
      image.driverFloorBasis === "release-notes"
        ? "its release notes"
        : image.driverFloorBasis === "cuda-minor-version-compat"
          ? `CUDA ${versionParts(image.cuda)[0]}.x minor-version compatibility`
          : `the GA driver of CUDA ${majorMinor(image.cuda)}`;
    return { floor: image.minDriverLinux, basis };
  }
  if (toolkit) return { floor: toolkit.minDriverLinux, basis: `the GA driver of CUDA ${toolkit.version}` };
  return null;
}

/** Judge one image: it runs when its build covers the GPU on the CPU and the driver is at or above its floor. */
export function judgeNgcImage(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
  context: NgcJudgeContext = {},
): NgcImageVerdict {
  const toolkit = toolkits.find((row) => row.version === majorMinor(image.cuda));
  const coverage = ngcGpuCoverage(
    image,
    toolkit,
    query.computeCapability,
    query.cpuArch,
    context.tegraCapabilities ?? [],
  );
  if (!coverage.covered) return { image, runs: false, driver: null, reason: coverage.detail };
  const floor = ngcDriverFloor(image, toolkit);
  if (!floor)
    return {
      image,
      runs: false,
      driver: null,
      reason: `${coverage.detail}; but no driver floor is sourced for ${image.tag} and CUDA ${image.cuda} is not in the toolkit table`,
    };
  const driver = effectiveDriver(query.driverVersion);
  if (context.gpuMinDriver && compareVersions(driver, context.gpuMinDriver) < 0)
    return {
      image,
      runs: false,
      driver: "unsupported",
      reason: `${coverage.detail}; but driver ${query.driverVersion} is older than ${context.gpuMinDriver}, the first driver that supports this GPU`,
    };
  if (compareVersions(driver, floor.floor) < 0) {
    const alternative =
      toolkit?.minorCompatMinDriverLinux && image.driverFloorBasis !== "cuda-minor-version-compat"
        ? `; CUDA ${versionParts(image.cuda)[0]}.x minor-version compatibility would start it from ${toolkit.minorCompatMinDriverLinux} with limits (no JIT of newer PTX), which gpuprep does not plan an image on`
        : "";
    return {
      image,
      runs: false,
      driver: "unsupported",
      reason: `${coverage.detail}; but driver ${query.driverVersion} is older than ${floor.floor}, the floor of ${image.tag} (${floor.basis})${alternative}`,
    };
  }
  if (!toolkit)
    return {
      image,
      runs: true,
      driver: null,
      reason: `${coverage.detail}; driver ${query.driverVersion} is at or above its floor ${floor.floor} (${floor.basis}); CUDA ${majorMinor(image.cuda)} is not in the toolkit table, so whether that is native or minor-version compatibility is not known`,
    };
  const support = driverSupport(driver, toolkit) === "native" ? "native" : "minor-compat";
  return {
    image,
    runs: true,
    driver: support,
    reason:
      support === "native"
        ? `${coverage.detail}; driver ${query.driverVersion} runs CUDA ${image.cuda} natively`
        : `${coverage.detail}; driver ${query.driverVersion} runs CUDA ${image.cuda} only under minor-version compatibility (any GPU, limited features: PTX newer than the driver cannot be JIT-compiled; CUDA ${toolkit.version}'s own driver is ${toolkit.minDriverLinux})`,
  };
}

export function ngcImagesFor(
  images: NgcImageRow[],
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
  context: NgcJudgeContext = {},
): NgcImageRow[] {
  return images
    .map((image) => judgeNgcImage(image, toolkits, query, context))
    .filter((verdict) => verdict.runs)
    .map((verdict) => verdict.image)
    .sort((a, b) => compareVersions(b.tag, a.tag));
}

/**
 * A PEP 440 local label as comparable segments: lowercase, split on . _ -, numbers without leading
 * zeros (pip shows NGC 24.07's "nv24.07" as "nv24.7"; both are the same version).
 */
function localSegments(local: string): string[] {
  return local
    .toLowerCase()
    .split(/[._-]/)
    .map((part) => (/^\d+$/.test(part) ? String(Number(part)) : part));
}

function splitLocal(version: string): { public: string; local: string[] } {
  const [head = "", local = ""] = version.trim().split("+", 2);
  return { public: head.toLowerCase(), local: local ? localSegments(local) : [] };
}

/**
 * How closely an installed torch version matches an image's torch: the number of local segments
 * that agree (the public version must be equal and the row's segments a prefix of the installed
 * ones), or 0 for no match. The installed side may carry a build id the row does not ("...nv26.01"
 * vs pip's "...nv26.1.42222806").
 */
export function ngcTorchMatch(image: NgcImageRow, installed: string): number {
  const row = splitLocal(image.torch);
  const have = splitLocal(installed);
  if (row.public !== have.public || row.local.length === 0) return 0;
  if (row.local.length > have.local.length) return 0;
  return row.local.every((segment, i) => segment === have.local[i]) ? row.local.length : 0;
}

/** The images whose torch is the installed one (as torch.__version__ or pip prints it), best match first. */
export function ngcImagesForTorch(images: NgcImageRow[], installed: string): NgcImageRow[] {
  const scored = images
    .map((image) => ({ image, score: ngcTorchMatch(image, installed) }))
    .filter((entry) => entry.score > 0);
  const best = Math.max(0, ...scored.map((entry) => entry.score));
  return scored.filter((entry) => entry.score === best).map((entry) => entry.image);
}

/** Every capability an image covers per CPU architecture, with the rule that covers it. */
export function ngcCoverageSummary(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  capabilities: string[],
  tegraCapabilities: string[] = [],
): Record<NgcCpuArch, Array<{ computeCapability: string; rule: "run" | "stated-floor" }>> {
  const summary: Record<NgcCpuArch, Array<{ computeCapability: string; rule: "run" | "stated-floor" }>> = {
    x86_64: [],
    aarch64: [],
  };
  for (const cpuArch of ["x86_64", "aarch64"] as const)
    for (const computeCapability of capabilities) {
      const coverage = ngcGpuCoverage(image, toolkit, computeCapability, cpuArch, tegraCapabilities);
      if (coverage.covered) summary[cpuArch].push({ computeCapability, rule: coverage.rule });
    }
  return summary;
}
