/**
 * Which NGC PyTorch images run on a GPU + CPU architecture (+ driver), judged like a wheel: the
 * image's torch arch list (per platform image, sourced or derived), whether its CUDA knows the GPU,
 * its driver floor, and the GPU's own driver floor. Where no arch list is sourced, a first-hand run
 * or NVIDIA's stated floor stands in; where nothing does, the image is "not known" to run. The rules
 * are written out in docs/knowledge-base.md ("NGC images"). Also: which image an installed torch
 * came from.
 */
import { newestTagFirst } from "../image-tag.js";
import {
  compareCapability,
  coverageFor,
  driverSupport,
  formatComputeCapability,
  type ComputeCapability,
  type DriverSupport,
} from "../compat.js";
import { rowCapability } from "../capability.js";
import type { CudaToolkitRow, NgcArchList, NgcCpuArch, NgcGpuRun, NgcImageRow, Source } from "../types.js";
import { compareVersions, majorMinor, versionParts } from "../../util/version.js";
import type { CpuArch } from "./torch.js";
import { rowDriver } from "../driver.js";
import {
  compareDriverVersions,
  formatDriverVersion,
  newestOfBranch,
  type DriverVersion,
} from "../../vocabulary/driver-version.js";

export interface NgcImageQuery {
  computeCapability: ComputeCapability;
  /** null: not known (each verdict then names the driver the image needs). */
  driverVersion: DriverVersion | null;
  cpuArch: CpuArch;
}

export interface NgcImageVerdict {
  image: NgcImageRow;
  runs: boolean;
  /**
   * How the driver runs the image's CUDA: native (at or above its CUDA's GA driver), minor-compat
   * (at or above the image's floor, below the GA driver), unsupported, or null: not judged, or the
   * image's CUDA is not in the toolkit table so "native" cannot be told from "minor-compat".
   */
  driver: DriverSupport | null;
  reason: string;
}

/** What a verdict needs from the other tables about the GPU. */
export interface NgcJudgeContext {
  /** Capabilities of Jetson (Tegra iGPU) parts, from the arch table. */
  tegraCapabilities?: string[];
  /** The lowest driver for this GPU (GPU table and arch table), or null. */
  gpuMinDriver?: string | null;
}

type NgcCoverageRule = "arch-list" | "run" | "stated-floor" | "jetpack";

export type NgcGpuCoverage =
  | {
      covered: true;
      rule: NgcCoverageRule;
      how: "sass" | "ptx-jit" | "jetpack";
      derived: boolean;
      detail: string;
    }
  | { covered: false; detail: string };

/** One image a GPU could use: the plain tag's amd64 or arm64 image, or the tag's Jetson -igpu image. */
export type NgcPlatform = "amd64" | "arm64" | "igpu";

export interface NgcVerdictQuery {
  computeCapability: ComputeCapability;
  /** The GPU by name, where known: its own driver floor applies. */
  gpuName?: string;
  cpuArch: CpuArch;
  /** The machine's driver; null or absent: not known (the verdict then names the driver it needs). */
  driverVersion?: DriverVersion | null;
}

/** Whether the image's torch carries code the GPU runs, and what says so. */
export interface NgcCodeVerdict {
  /**
   * sass / ptx-jit: from the image's arch list (or NVIDIA's stated floor); jetpack: a Jetson image
   * built for the JetPack that runs this GPU; run-only: no arch list, but a first-hand run ran;
   * none: it cannot run; unknown: nothing sourced says either way.
   */
  how: "sass" | "ptx-jit" | "jetpack" | "run-only" | "none" | "unknown";
  /** The arch-list entries that make it run, best first. */
  via: string[];
  /** The platform image's arch list, where sourced or derived. */
  archList: string[] | null;
  /** What the verdict rests on. */
  basis: NgcArchList["basis"] | "run" | "stated-floor" | "jetpack" | "exception" | "platform" | null;
  derived: boolean;
  detail: string;
}

export interface NgcCudaVerdict {
  /** Whether the image's CUDA compiles code for the GPU's architecture; null: not known. */
  knows: boolean | null;
  derived: boolean;
  detail: string;
}

export interface NgcDriverVerdict {
  /** null: no driver given (or the image's CUDA is not in the toolkit table); jetpack: JetPack's own driver. */
  support: DriverSupport | "jetpack" | null;
  /** The image's driver floor and what it rests on. */
  floor: string | null;
  floorBasis: string | null;
  /** The driver that runs the image's CUDA natively, where known. */
  nativeFrom: string | null;
  detail: string;
}

/** Every image a GPU could use, with the verdict and the sources it rests on. */
export interface NgcImageChoice {
  image: NgcImageRow;
  /** The image reference to pull: nvcr.io/nvidia/pytorch:25.01-py3 or ...-py3-igpu. */
  ref: string;
  platform: NgcPlatform;
  /** Code runs, the CUDA knows the GPU and the driver runs it (or no driver was given). */
  runs: boolean;
  /** The code verdict is derived (a derived arch list, a JetPack statement); cuda.derived says the same of the CUDA. */
  derived: boolean;
  code: NgcCodeVerdict;
  cuda: NgcCudaVerdict;
  driver: NgcDriverVerdict;
  reason: string;
  sources: Source[];
}

const DOCKER_PLATFORM: Record<NgcCpuArch, "amd64" | "arm64"> = { x86_64: "amd64", aarch64: "arm64" };

/** Whether the tag publishes an image for this CPU architecture: true, false, or null (not sourced). */
export function platformPublished(image: NgcImageRow, cpuArch: CpuArch): boolean | null {
  return image.platforms[DOCKER_PLATFORM[cpuArch]];
}

function describeRun(run: NgcGpuRun): string {
  const where =
    run.cpuArchBasis === "assumed"
      ? `${run.cpuArch}, CPU not stated and taken as x86_64`
      : (run.cpuArch ?? "CPU not stated");
  return `${run.gpu} (${run.computeCapability}, ${where})`;
}

function ranOn(image: NgcImageRow, key: string, cpuArch: CpuArch): NgcGpuRun | undefined {
  return image.gpus.runs.find(
    (run) => run.computeCapability === key && run.result === "ran" && run.cpuArch === cpuArch,
  );
}

function runsSeen(image: NgcImageRow, key: string): string {
  const others = image.gpus.runs.filter((run) => run.computeCapability === key);
  return others.length > 0
    ? `; runs on ${key} seen: ${others.map((run) => `${describeRun(run)} ${run.result}`).join("; ")}`
    : "";
}

function codeVerdict(
  how: NgcCodeVerdict["how"],
  basis: NgcCodeVerdict["basis"],
  detail: string,
  extra: Partial<NgcCodeVerdict> = {},
): NgcCodeVerdict {
  return { how, via: [], archList: null, basis, derived: false, detail, ...extra };
}

/** The code verdict from an arch list: SASS, PTX the driver can JIT, or none (Tegra rules in compat.ts). */
function fromArchList(list: NgcArchList, cc: ComputeCapability, tag: string): NgcCodeVerdict {
  const key = formatComputeCapability(cc);
  const coverage = coverageFor(list.archList, cc);
  const what = `${tag} linux/${list.platform} torch arch list ${list.archList.join(" ")} (${list.basis === "derived" ? "derived" : list.basis})`;
  const detail =
    coverage.how === "sass"
      ? `${what}: ${coverage.via[0]} SASS runs on ${key}`
      : coverage.how === "ptx-jit"
        ? `${what}: only PTX (${coverage.via[0]}) covers ${key}, JIT-compiled by the driver`
        : `${what}: no SASS for ${key} and no PTX it can JIT`;
  return codeVerdict(coverage.how, list.basis, detail, {
    via: coverage.via,
    archList: list.archList,
    derived: list.basis === "derived",
  });
}

/** NVIDIA's "compute capability X and later" (23.02), for a non-Jetson GPU whose SASS the CUDA builds. */
function fromStatedFloor(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  cc: ComputeCapability,
): NgcCodeVerdict {
  const floor = image.gpus.minComputeCapability as string;
  const key = formatComputeCapability(cc);
  if (compareCapability(cc, rowCapability(floor)) < 0)
    return codeVerdict(
      "none",
      "stated-floor",
      `compute capability ${key} is below the stated minimum ${floor}`,
    );
  if (!toolkit?.sassTargets)
    return codeVerdict(
      "unknown",
      "stated-floor",
      `${key} is at or above the stated minimum ${floor}, but the SASS targets of CUDA ${image.cuda} are not in the toolkit table`,
    );
  const sass = coverageFor(
    toolkit.sassTargets.map((sm) => `sm_${sm}`),
    cc,
  );
  if (sass.how !== "sass")
    return codeVerdict(
      "none",
      "stated-floor",
      `${key} is at or above the stated minimum ${floor}, but CUDA ${toolkit.version} compiles no SASS that runs on ${key} (no sm_${cc.major}x at or below it)`,
    );
  return codeVerdict(
    "sass",
    "stated-floor",
    `${key} is at or above the stated minimum ${floor} and CUDA ${toolkit.version} compiles ${sass.via[0]} SASS, which runs on it`,
    { via: sass.via },
  );
}

/** The one Jetson compute capability that runs SBSA (arm64 image) CUDA, from CUDA 13.0 on. */
const THOR_UNIFIED = "11.0";

/** No image of the platform is published (or none is known to be). */
function unpublishedVerdict(image: NgcImageRow, cpuArch: CpuArch): NgcCodeVerdict | null {
  const platform = DOCKER_PLATFORM[cpuArch];
  const published = platformPublished(image, cpuArch);
  if (published === true) return null;
  return codeVerdict(
    published === false ? "none" : "unknown",
    "platform",
    published === false
      ? `no linux/${platform} image is published for ${image.tag}`
      : `no source says a linux/${platform} image is published for ${image.tag}`,
  );
}

/**
 * Before CUDA 13 a Jetson's CUDA was its own build, not the SBSA one the arm64 image carries.
 * CUDA 13.0 unified the two for Thor (11.0), "The only exception is Orin (sm_87), which will
 * continue on its current path for now" (NVIDIA's CUDA 13.0 for Jetson Thor post): so an arm64
 * image runs on a Jetson only from CUDA 13 and only on Thor.
 */
function sbsaOnJetsonVerdict(
  image: NgcImageRow,
  key: string,
  tegraCapabilities: string[],
): NgcCodeVerdict | null {
  if (!tegraCapabilities.includes(key)) return null;
  const cudaMajor = versionParts(image.cuda)[0] ?? 0;
  if (cudaMajor < 13)
    return codeVerdict(
      "none",
      "platform",
      `${image.tag}'s linux/arm64 image carries SBSA CUDA ${majorMinor(image.cuda)}, which does not run on a Jetson (${key}) before CUDA 13: use its -igpu image`,
    );
  if (key !== THOR_UNIFIED)
    return codeVerdict(
      "none",
      "platform",
      `${image.tag}'s linux/arm64 image carries SBSA CUDA ${majorMinor(image.cuda)}; NVIDIA unified SBSA and Jetson CUDA from 13.0 for Thor (${THOR_UNIFIED}) only, a Jetson of ${key} stays on its own CUDA: use an -igpu image built for its JetPack`,
    );
  return null;
}

/** No arch list for the platform: a first-hand run, else NVIDIA's stated floor, else not known. */
function withoutArchList(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  cc: ComputeCapability,
  cpuArch: CpuArch,
  tegraCapabilities: string[],
): NgcCodeVerdict {
  const key = formatComputeCapability(cc);
  const platform = DOCKER_PLATFORM[cpuArch];
  const ran = ranOn(image, key, cpuArch);
  if (ran)
    return codeVerdict(
      "run-only",
      "run",
      `no arch list is sourced for ${image.tag} linux/${platform}; a first-hand run on ${describeRun(ran)} ran`,
    );
  if (tegraCapabilities.includes(key))
    return codeVerdict(
      "unknown",
      null,
      `${key} is a Jetson (Tegra iGPU) part: no arch list for ${image.tag} linux/${platform} and no run on it on ${cpuArch}${runsSeen(image, key)}`,
    );
  if (image.gpus.minComputeCapability) return fromStatedFloor(image, toolkit, cc);
  return codeVerdict(
    "unknown",
    null,
    `no arch list is sourced for ${image.tag} linux/${platform}, no first-hand run on ${key} ${cpuArch} is recorded and NVIDIA's GPU floor for it is not sourced${runsSeen(image, key)}`,
  );
}

/** The code verdict for the plain tag's image on a CPU architecture (amd64 or arm64). */
function plainImageCode(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  cc: ComputeCapability,
  cpuArch: CpuArch,
  tegraCapabilities: string[],
): NgcCodeVerdict {
  const key = formatComputeCapability(cc);
  const platform = DOCKER_PLATFORM[cpuArch];
  const unpublished = unpublishedVerdict(image, cpuArch);
  if (unpublished) return unpublished;
  const exception = image.gpus.exceptions.find((entry) => entry.computeCapability === key);
  if (exception)
    return codeVerdict(
      "none",
      "exception",
      `a known exception for compute capability ${key}: ${exception.note}`,
    );
  const sbsa = platform === "arm64" ? sbsaOnJetsonVerdict(image, key, tegraCapabilities) : null;
  if (sbsa) return sbsa;
  const list = image.archLists.find((entry) => entry.platform === platform);
  if (list) return fromArchList(list, cc, image.tag);
  return withoutArchList(image, toolkit, cc, cpuArch, tegraCapabilities);
}

/** The code verdict for the tag's Jetson (-igpu) image: built for one JetPack, which runs some Jetsons. */
function jetsonImageCode(image: NgcImageRow, key: string): NgcCodeVerdict {
  if (image.platforms.igpu !== true)
    return codeVerdict(
      image.platforms.igpu === false ? "none" : "unknown",
      "platform",
      image.platforms.igpu === false
        ? `NVIDIA published no ${image.tag}-py3-igpu image`
        : `no source says a ${image.tag}-py3-igpu image is published`,
    );
  const jetson = image.jetson;
  if (!jetson) return codeVerdict("unknown", null, `the JetPack of ${image.tag}-py3-igpu is not sourced`);
  if (!jetson.computeCapabilities.includes(key))
    return codeVerdict(
      "none",
      "jetpack",
      `${image.tag}-py3-igpu is built for JetPack ${jetson.jetpack}, which runs on ${jetson.computeCapabilities.join(", ")}, not ${key}`,
      { derived: true },
    );
  return codeVerdict(
    "jetpack",
    "jetpack",
    `${image.tag}-py3-igpu is built for JetPack ${jetson.jetpack}, which runs on compute capability ${key} (${jetson.note})`,
    { derived: true },
  );
}

/**
 * Whether a CUDA version compiles SASS that runs on a capability ("knows" the architecture): read
 * from its nvcc target list, or derived when the toolkits below and above it (same major) agree.
 */
function cudaKnowsArch(toolkits: CudaToolkitRow[], cuda: string, cc: ComputeCapability): NgcCudaVerdict {
  const key = formatComputeCapability(cc);
  const knows = (row: CudaToolkitRow) =>
    coverageFor(
      (row.sassTargets ?? []).map((sm) => `sm_${sm}`),
      cc,
    ).how === "sass";
  const version = majorMinor(cuda);
  const own = toolkits.find((row) => row.version === version);
  if (own?.sassTargets) {
    const yes = knows(own);
    return {
      knows: yes,
      derived: false,
      detail: yes
        ? `CUDA ${version} compiles code for ${key}`
        : `CUDA ${version} compiles no code for ${key} (its nvcc targets stop at sm_${own.sassTargets[own.sassTargets.length - 1]}): its libraries cannot serve this GPU`,
    };
  }
  const major = versionParts(version)[0];
  const listed = toolkits
    .filter((row) => row.sassTargets && versionParts(row.version)[0] === major)
    .sort((a, b) => compareVersions(a.version, b.version));
  const below = listed.filter((row) => compareVersions(row.version, version) < 0).pop();
  const above = listed.find((row) => compareVersions(row.version, version) > 0);
  if (below && above && knows(below) === knows(above))
    return {
      knows: knows(below),
      derived: true,
      detail: `derived: CUDA ${below.version} and ${above.version} both ${knows(below) ? "compile" : "do not compile"} code for ${key}, so ${version} between them is taken to as well`,
    };
  return {
    knows: null,
    derived: false,
    detail: `whether CUDA ${version} compiles code for ${key} is not known`,
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

function driverForGpu(driver: DriverVersion, given: string, context: NgcJudgeContext): string | null {
  if (context.gpuMinDriver && compareDriverVersions(driver, rowDriver(context.gpuMinDriver)) < 0)
    return `driver ${given} is older than ${context.gpuMinDriver}, the first driver that supports this GPU`;
  return null;
}

/** How a driver runs an image's CUDA; support null when no driver is given. */
function driverVerdict(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  givenDriver: DriverVersion | null,
  context: NgcJudgeContext,
): NgcDriverVerdict {
  const floor = ngcDriverFloor(image, toolkit);
  const base = {
    floor: floor?.floor ?? null,
    floorBasis: floor?.basis ?? null,
    nativeFrom: toolkit?.minDriverLinux ?? null,
  };
  const needs = floor ? `${floor.floor} or newer (${floor.basis})` : "a floor that is not sourced";
  if (!givenDriver)
    return { ...base, support: null, detail: `driver not given: ${image.tag} needs ${needs}` };
  const given = formatDriverVersion(givenDriver);
  const driver = newestOfBranch(givenDriver);
  const gpuProblem = driverForGpu(driver, given, context);
  if (gpuProblem) return { ...base, support: "unsupported", detail: gpuProblem };
  if (!floor)
    return {
      ...base,
      support: null,
      detail: `no driver floor is sourced for ${image.tag} and CUDA ${image.cuda} is not in the toolkit table`,
    };
  if (compareDriverVersions(driver, rowDriver(floor.floor)) < 0) {
    const alternative =
      toolkit?.minorCompatMinDriverLinux && image.driverFloorBasis !== "cuda-minor-version-compat"
        ? `; CUDA ${versionParts(image.cuda)[0]}.x minor-version compatibility would start it from ${toolkit.minorCompatMinDriverLinux} with limits (no JIT of newer PTX), which gpuprep does not plan an image on`
        : "";
    return {
      ...base,
      support: "unsupported",
      detail: `driver ${given} is older than ${floor.floor}, the floor of ${image.tag} (${floor.basis})${alternative}`,
    };
  }
  if (!toolkit)
    return {
      ...base,
      support: null,
      detail: `driver ${given} is at or above its floor ${floor.floor} (${floor.basis}); CUDA ${majorMinor(image.cuda)} is not in the toolkit table, so whether that is native or minor-version compatibility is not known`,
    };
  const support = driverSupport(driver, toolkit) === "native" ? "native" : "minor-compat";
  return {
    ...base,
    support,
    detail:
      support === "native"
        ? `driver ${given} runs CUDA ${image.cuda} natively`
        : `driver ${given} runs CUDA ${image.cuda} only under minor-version compatibility (any GPU, limited features: PTX newer than the driver cannot be JIT-compiled; CUDA ${toolkit.version}'s own driver is ${toolkit.minDriverLinux})`,
  };
}

const RUNNING_CODE = new Set<NgcCodeVerdict["how"]>(["sass", "ptx-jit", "jetpack", "run-only"]);

/** Does the image run, and the one-line reason: the first thing that stops it, else what makes it run. */
function conclude(
  code: NgcCodeVerdict,
  cuda: NgcCudaVerdict,
  driver: NgcDriverVerdict,
): { runs: boolean; reason: string } {
  if (!RUNNING_CODE.has(code.how)) return { runs: false, reason: code.detail };
  // A first-hand run shows the image's libraries serve the GPU; otherwise its CUDA must know it.
  if (code.how !== "run-only" && code.how !== "jetpack" && cuda.knows !== true)
    return { runs: false, reason: `${code.detail}; but ${cuda.detail}` };
  if (driver.support === "unsupported")
    return { runs: false, reason: `${code.detail}; but ${driver.detail}` };
  if (code.how === "ptx-jit" && driver.support === "minor-compat")
    return {
      runs: false,
      reason: `${code.detail}; but ${driver.detail}, so that PTX cannot be JIT-compiled (it needs ${driver.nativeFrom ?? "the CUDA's own driver"} or newer)`,
    };
  return { runs: true, reason: `${code.detail}; ${driver.detail}` };
}

function refOf(image: NgcImageRow, platform: NgcPlatform): string {
  return platform === "igpu" ? `${image.image}-igpu` : image.image;
}

/** The row sources a verdict rests on: the arch list's, the JetPack statement's, or the run's. */
function verdictSources(image: NgcImageRow, platform: NgcPlatform, key: string): Source[] {
  const urls = new Set<string>();
  const list = image.archLists.find((entry) => entry.platform === platform);
  if (list) urls.add(list.source);
  if (platform === "igpu" && image.jetson) urls.add(image.jetson.source);
  for (const run of image.gpus.runs) if (run.computeCapability === key) urls.add(run.source);
  for (const entry of image.gpus.exceptions) if (entry.computeCapability === key) urls.add(entry.source);
  const chosen = image.sources.filter((source) => urls.has(source.url));
  return chosen.length > 0 ? chosen : image.sources;
}

/** One image on one platform: code, CUDA, driver, and whether it runs. */
export function judgeNgcImageOn(
  image: NgcImageRow,
  platform: NgcPlatform,
  toolkits: CudaToolkitRow[],
  query: NgcVerdictQuery,
  context: NgcJudgeContext = {},
): NgcImageChoice {
  const cc = query.computeCapability;
  const key = formatComputeCapability(cc);
  const toolkit = toolkits.find((row) => row.version === majorMinor(image.cuda));
  const code =
    platform === "igpu"
      ? jetsonImageCode(image, key)
      : plainImageCode(
          image,
          toolkit,
          cc,
          platform === "amd64" ? "x86_64" : "aarch64",
          context.tegraCapabilities ?? [],
        );
  const cuda = cudaKnowsArch(toolkits, image.cuda, cc);
  const driver: NgcDriverVerdict =
    platform === "igpu"
      ? {
          support: "jetpack",
          floor: null,
          floorBasis: null,
          nativeFrom: null,
          detail: `the Jetson driver comes with JetPack ${image.jetson?.jetpack ?? "(not sourced)"}`,
        }
      : driverVerdict(image, toolkit, query.driverVersion ?? null, context);
  const { runs, reason } = conclude(code, cuda, driver);
  return {
    image,
    ref: refOf(image, platform),
    platform,
    runs,
    derived: code.derived,
    code,
    cuda,
    driver,
    reason,
    sources: verdictSources(image, platform, key),
  };
}

/** The platform images a GPU on a CPU architecture could use: the plain tag's, and -igpu for a Jetson. */
function platformsFor(cpuArch: CpuArch, tegra: boolean): NgcPlatform[] {
  if (cpuArch === "x86_64") return ["amd64"];
  return tegra ? ["arm64", "igpu"] : ["arm64"];
}

/**
 * Every image, on every platform image the GPU could use, with its verdict: newest tag first, and
 * within a tag the plain image before the -igpu one. The planner's "newest image that runs with
 * this driver" is the first with runs (prefer driver.support "native"; see newestRunningNgcImage).
 */
export function ngcImageVerdicts(
  images: NgcImageRow[],
  toolkits: CudaToolkitRow[],
  query: NgcVerdictQuery,
  context: NgcJudgeContext = {},
): NgcImageChoice[] {
  const tegra = (context.tegraCapabilities ?? []).includes(formatComputeCapability(query.computeCapability));
  const sorted = [...images].sort(newestTagFirst);
  return sorted.flatMap((image) =>
    platformsFor(query.cpuArch, tegra).map((platform) =>
      judgeNgcImageOn(image, platform, toolkits, query, context),
    ),
  );
}

/**
 * The newest image that runs: one the driver runs natively when `preferNative` (minor-version
 * compatibility cannot JIT newer PTX), else the newest that runs at all; null when none runs.
 */
export function newestRunningNgcImage(choices: NgcImageChoice[], preferNative = true): NgcImageChoice | null {
  const running = choices.filter((choice) => choice.runs);
  if (!preferNative) return running[0] ?? null;
  return (
    running.find((choice) => choice.driver.support === "native" || choice.driver.support === "jetpack") ??
    running[0] ??
    null
  );
}

/** The coverage of the plain tag on a CPU architecture, without the driver (integrity, `kb ngc`). */
export function ngcGpuCoverage(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  computeCapability: ComputeCapability,
  cpuArch: CpuArch = "x86_64",
  tegraCapabilities: string[] = [],
): NgcGpuCoverage {
  const platform = DOCKER_PLATFORM[cpuArch];
  const choice = judgeNgcImageOn(
    image,
    platform,
    toolkits,
    { computeCapability, cpuArch },
    { tegraCapabilities },
  );
  return coverageOf(choice);
}

/** The code runs and the CUDA knows the GPU (a first-hand run or a JetPack statement stands for both). */
function codeServes(choice: Pick<NgcImageChoice, "code" | "cuda">): boolean {
  const { code, cuda } = choice;
  if (!RUNNING_CODE.has(code.how)) return false;
  return code.how === "run-only" || code.how === "jetpack" || cuda.knows === true;
}

function coverageOf(choice: NgcImageChoice): NgcGpuCoverage {
  const { code } = choice;
  if (!codeServes(choice)) return { covered: false, detail: choice.reason };
  const rule: NgcCoverageRule =
    code.basis === "stated-floor"
      ? "stated-floor"
      : code.how === "run-only"
        ? "run"
        : code.how === "jetpack"
          ? "jetpack"
          : "arch-list";
  const how = code.how === "run-only" ? "sass" : (code.how as "sass" | "ptx-jit" | "jetpack");
  return { covered: true, rule, how, derived: choice.derived, detail: choice.reason };
}

/** Judge the plain tag's image for a machine (the verdict the planner has used so far). */
export function judgeNgcImage(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
  context: NgcJudgeContext = {},
): NgcImageVerdict {
  const platform = DOCKER_PLATFORM[query.cpuArch];
  const choice = judgeNgcImageOn(image, platform, toolkits, query, context);
  const support = choice.driver.support === "jetpack" ? null : choice.driver.support;
  return { image, runs: choice.runs, driver: codeServes(choice) ? support : null, reason: choice.reason };
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
    .sort(newestTagFirst);
}

/** One capability an image's platform image runs on, and how. */
export interface NgcRunsOnEntry {
  computeCapability: string;
  how: "sass" | "ptx-jit" | "jetpack" | "run-only";
  rule: NgcCoverageRule;
  derived: boolean;
}

/** For each platform image of a tag, the capabilities (of the arch table) it runs on, driver aside. */
export function ngcRunsOn(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  capabilities: string[],
  tegraCapabilities: string[] = [],
): Record<NgcPlatform, NgcRunsOnEntry[]> {
  const summary: Record<NgcPlatform, NgcRunsOnEntry[]> = { amd64: [], arm64: [], igpu: [] };
  for (const platform of ["amd64", "arm64", "igpu"] as const)
    for (const computeCapability of capabilities) {
      const cpuArch = platform === "amd64" ? "x86_64" : "aarch64";
      const choice = judgeNgcImageOn(
        image,
        platform,
        toolkits,
        { computeCapability: rowCapability(computeCapability), cpuArch },
        { tegraCapabilities },
      );
      const coverage = coverageOf(choice);
      if (coverage.covered)
        summary[platform].push({
          computeCapability,
          how: choice.code.how as NgcRunsOnEntry["how"],
          rule: coverage.rule,
          derived: coverage.derived,
        });
    }
  return summary;
}

/** Every capability an image covers per CPU architecture (plain tag), with the rule that covers it. */
export function ngcCoverageSummary(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  capabilities: string[],
  tegraCapabilities: string[] = [],
): Record<NgcCpuArch, Array<{ computeCapability: string; rule: NgcCoverageRule }>> {
  const summary: Record<NgcCpuArch, Array<{ computeCapability: string; rule: NgcCoverageRule }>> = {
    x86_64: [],
    aarch64: [],
  };
  for (const cpuArch of ["x86_64", "aarch64"] as const)
    for (const computeCapability of capabilities) {
      const coverage = ngcGpuCoverage(
        image,
        toolkits,
        rowCapability(computeCapability),
        cpuArch,
        tegraCapabilities,
      );
      if (coverage.covered) summary[cpuArch].push({ computeCapability, rule: coverage.rule });
    }
  return summary;
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
function ngcTorchMatch(image: NgcImageRow, installed: string): number {
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
