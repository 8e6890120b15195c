/**
 * Contradictions in the NGC image table that its schema cannot see: a torch suffix naming another
 * release, a driver floor that does not follow from the toolkit table, a first-hand run its CUDA
 * could not have served (a CUDA 12 image "running" Thor as 11.0), a run on a platform the row says
 * is not published, a warning without the exception it implies. One line per problem.
 */
import { newestTagFirst } from "./image-tag.js";
import { coverageFor } from "./compat.js";
import { rowDriver } from "./driver.js";
import { compareDriverVersions } from "../vocabulary/driver-version.js";
import { rowCapability } from "./capability.js";
import type { KnowledgeBaseData } from "./load.js";
import type { ArchRow, CudaToolkitRow, NgcArchList, NgcGpuRun, NgcImageRow } from "./types.js";
import { resolveGpu } from "./queries/gpu.js";
import { judgeNgcImageOn, platformPublished } from "./queries/ngc.js";
import { compareVersions, majorMinor, versionParts } from "../util/version.js";

/** Thor is 10.1 to CUDA 12 and 11.0 to CUDA 13 (archs.json, cuRANDDx notes): each name belongs to one major. */
const THOR_NAME_BY_CUDA_MAJOR: Record<number, string> = { 12: "10.1", 13: "11.0" };

function driverFloorProblems(image: NgcImageRow, toolkits: CudaToolkitRow[]): string[] {
  const name = `NGC ${image.tag}`;
  const problems: string[] = [];
  const toolkit = toolkits.find((row) => row.version === majorMinor(image.cuda));
  const floor = image.minDriverLinux;
  if ((floor === null) !== (image.driverFloorBasis === null))
    problems.push(`${name}: minDriverLinux and driverFloorBasis must be given together`);
  if (!floor) {
    if (!toolkit)
      problems.push(`${name}: CUDA ${image.cuda} is not in the toolkit table and no floor is given`);
    return problems;
  }
  if (image.driverFloorBasis === "cuda-ga-driver") {
    if (!toolkit) problems.push(`${name}: CUDA ${image.cuda} is not in the toolkit table`);
    else if (floor !== toolkit.minDriverLinux)
      problems.push(
        `${name}: driver floor ${floor} is not CUDA ${toolkit.version}'s GA driver ${toolkit.minDriverLinux}`,
      );
  } else if (image.driverFloorBasis === "cuda-minor-version-compat") {
    const major = versionParts(image.cuda)[0];
    const sameMajor = toolkits.filter(
      (row) => versionParts(row.version)[0] === major && row.minorCompatMinDriverLinux,
    );
    if (sameMajor.length === 0)
      problems.push(`${name}: no CUDA ${major}.x toolkit row states a minor-version compatibility floor`);
    for (const row of sameMajor)
      if (rowDriver(row.minorCompatMinDriverLinux!).branch !== rowDriver(floor).branch)
        problems.push(
          `${name}: driver floor ${floor} is not CUDA ${row.version}'s minor-compat floor ${row.minorCompatMinDriverLinux}`,
        );
  } else if (toolkit) {
    const stated = rowDriver(floor);
    const toolkitFloor = rowDriver(toolkit.minorCompatMinDriverLinux ?? toolkit.minDriverLinux);
    // Release notes often name a branch ("525 or later"): compare branches then.
    const below =
      stated.minor === null
        ? stated.branch < toolkitFloor.branch
        : compareDriverVersions(stated, toolkitFloor) < 0;
    if (below) problems.push(`${name}: driver ${floor} is below CUDA ${toolkit.version}'s floor`);
  }
  return problems;
}

/** What the checks of one image's GPU statements read besides the image: the tables, by key. */
interface GpuContext {
  image: NgcImageRow;
  data: KnowledgeBaseData;
  toolkit: CudaToolkitRow | undefined;
  archs: Map<string, ArchRow>;
  urls: Set<string>;
  exceptions: Set<string>;
  /** The SASS targets of the image's CUDA ("sm_90"), where the toolkit table has them. */
  sass: string[] | undefined;
}

/** The source and capability of each exception NVIDIA lists. */
function exceptionProblems({ image, archs, urls }: GpuContext): string[] {
  const name = `NGC ${image.tag}`;
  return image.gpus.exceptions.flatMap((entry) => [
    ...(urls.has(entry.source)
      ? []
      : [`${name}: exception ${entry.computeCapability}: source not among the row's`]),
    ...(archs.has(entry.computeCapability)
      ? []
      : [`${name}: exception names capability ${entry.computeCapability}, not in the arch table`]),
  ]);
}

/** A run's source, capability and CPU (stated or assumed). */
function runMachineProblems(run: NgcGpuRun, what: string, ctx: GpuContext): string[] {
  const problems: string[] = [];
  if (!ctx.urls.has(run.source))
    problems.push(`${what}: its source ${run.source} is not among the row's sources`);
  const arch = ctx.archs.get(run.computeCapability);
  if (!arch) problems.push(`${what}: capability not in the arch table`);
  if ((run.cpuArch === null) !== (run.cpuArchBasis === null))
    problems.push(`${what}: cpuArch and cpuArchBasis must be given together`);
  if (run.cpuArchBasis === "assumed" && (run.cpuArch !== "x86_64" || arch?.tegra))
    problems.push(`${what}: only a discrete GPU's unstated CPU may be taken as x86_64`);
  return problems;
}

/** A run against the GPU table (its capability, its host CPU) and the platforms the row publishes. */
function runGpuProblems(run: NgcGpuRun, what: string, ctx: GpuContext): string[] {
  const problems: string[] = [];
  const gpu = resolveGpu(ctx.data.gpus, run.gpu).match;
  if (gpu && gpu.computeCapability !== run.computeCapability)
    problems.push(`${what}: the GPU table gives ${gpu.name} capability ${gpu.computeCapability}`);
  if (gpu?.hostCpuArch && run.cpuArch !== gpu.hostCpuArch)
    problems.push(`${what}: ${gpu.name} exists only with a ${gpu.hostCpuArch} host`);
  if (run.cpuArch && run.result !== "failed" && platformPublished(ctx.image, run.cpuArch) !== true)
    problems.push(`${what}: it ran on ${run.cpuArch}, but the row does not say that image is published`);
  return problems;
}

/** A run's result against the image: Thor's name for its CUDA, exceptions, code its CUDA compiles. */
function runResultProblems(run: NgcGpuRun, what: string, ctx: GpuContext): string[] {
  const problems: string[] = [];
  const cudaMajor = versionParts(ctx.image.cuda)[0] ?? 0;
  const thorName = THOR_NAME_BY_CUDA_MAJOR[cudaMajor];
  if (
    Object.values(THOR_NAME_BY_CUDA_MAJOR).includes(run.computeCapability) &&
    run.computeCapability !== thorName
  )
    problems.push(`${what}: a CUDA ${cudaMajor} image sees Thor as ${thorName ?? "neither 10.1 nor 11.0"}`);
  const listed = ctx.exceptions.has(run.computeCapability);
  if (run.result === "ran") {
    if (listed) problems.push(`${what}: ran, yet ${run.computeCapability} is listed as an exception`);
    if (ctx.sass && coverageFor(ctx.sass, rowCapability(run.computeCapability)).how !== "sass")
      problems.push(`${what}: ran, but CUDA ${ctx.toolkit!.version} compiles no SASS for it`);
  } else if ((run.result === "warned" || run.result === "failed") && !listed)
    problems.push(`${what}: ${run.result}, but ${run.computeCapability} is not listed as an exception`);
  return problems;
}

function gpuProblems(image: NgcImageRow, data: KnowledgeBaseData): string[] {
  const toolkit = data.cudaToolkits.find((row) => row.version === majorMinor(image.cuda));
  const ctx: GpuContext = {
    image,
    data,
    toolkit,
    archs: new Map(data.archs.map((row) => [row.computeCapability, row])),
    urls: new Set(image.sources.map((source) => source.url)),
    exceptions: new Set(image.gpus.exceptions.map((entry) => entry.computeCapability)),
    sass: toolkit?.sassTargets?.map((sm) => `sm_${sm}`),
  };
  const floorCc = image.gpus.minComputeCapability ? rowCapability(image.gpus.minComputeCapability) : null;
  const floorProblem =
    floorCc && ctx.sass && coverageFor(ctx.sass, floorCc).how !== "sass"
      ? [
          `NGC ${image.tag}: minimum compute capability ${image.gpus.minComputeCapability} cannot be compiled by CUDA ${toolkit!.version}`,
        ]
      : [];
  return [
    ...floorProblem,
    ...exceptionProblems(ctx),
    ...image.gpus.runs.flatMap((run) => {
      const what = `NGC ${image.tag}: run on ${run.gpu} (${run.computeCapability})`;
      return [
        ...runMachineProblems(run, what, ctx),
        ...runGpuProblems(run, what, ctx),
        ...runResultProblems(run, what, ctx),
      ];
    }),
  ];
}

/** The problems of one platform's arch list: its source, its platform, its basis note, its targets. */
function oneArchListProblems(
  image: NgcImageRow,
  list: NgcArchList,
  toolkit: CudaToolkitRow | undefined,
): string[] {
  const problems: string[] = [];
  const what = `NGC ${image.tag} linux/${list.platform} arch list`;
  if (!image.sources.some((source) => source.url === list.source))
    problems.push(`${what}: its source ${list.source} is not among the row's sources`);
  if (image.platforms[list.platform] !== true)
    problems.push(`${what}: the row does not say that image is published`);
  if (list.basis === "derived" && !/^derived\b/.test(list.note))
    problems.push(`${what}: a derived list must say so first in its note`);
  for (const entry of list.archList) {
    const sm = entry.replace(/^(sm|compute)_/, "").replace(/[af]$/, "");
    if (toolkit?.sassTargets && !toolkit.sassTargets.includes(sm))
      problems.push(`${what}: ${entry} cannot be compiled by CUDA ${toolkit.version}`);
  }
  if (list.basis !== "derived") problems.push(...exceptionsWithSass(image, list, what));
  return problems;
}

/** A read (not derived) arch list with SASS for a capability NVIDIA lists as an exception where a run warned or failed. */
function exceptionsWithSass(image: NgcImageRow, list: NgcArchList, what: string): string[] {
  const warnedHere = (cc: string) =>
    image.gpus.runs.some(
      (run) =>
        run.computeCapability === cc &&
        (run.result === "warned" || run.result === "failed") &&
        (run.cpuArch === "x86_64" ? "amd64" : "arm64") === list.platform,
    );
  const sass = list.archList.filter((target) => target.startsWith("sm_"));
  return image.gpus.exceptions
    .filter((exception) => warnedHere(exception.computeCapability))
    .filter((entry) => coverageFor(sass, rowCapability(entry.computeCapability)).how === "sass")
    .map((entry) => `${what}: has SASS for ${entry.computeCapability}, a known exception`);
}

/** A run that ran on a platform with an arch list: the list must carry code for that GPU. */
function runsWithoutCode(image: NgcImageRow, data: KnowledgeBaseData): string[] {
  const tegra = data.archs.filter((row) => row.tegra).map((row) => row.computeCapability);
  const problems: string[] = [];
  for (const run of image.gpus.runs) {
    if (run.result !== "ran" || !run.cpuArch) continue;
    const platform = run.cpuArch === "x86_64" ? "amd64" : "arm64";
    if (!image.archLists.some((list) => list.platform === platform)) continue;
    const choice = judgeNgcImageOn(
      image,
      platform,
      data.cudaToolkits,
      { computeCapability: rowCapability(run.computeCapability), cpuArch: run.cpuArch },
      { tegraCapabilities: tegra },
    );
    if (choice.code.how === "none")
      problems.push(
        `NGC ${image.tag}: a run on ${run.gpu} (${run.computeCapability}) ran, but its ${platform} arch list has no code for it`,
      );
  }
  return problems;
}

/**
 * Arch lists and Jetson statements: sourced from the row, on a published platform, compilable by the
 * image's CUDA, and not contradicted by a first-hand run (a run that ran where the list has no code)
 * or, for a read list, by a known exception it has SASS for.
 */
function archListProblems(image: NgcImageRow, data: KnowledgeBaseData): string[] {
  const toolkit = data.cudaToolkits.find((row) => row.version === majorMinor(image.cuda));
  const platforms = image.archLists.map((list) => list.platform);
  return [
    ...(new Set(platforms).size !== platforms.length
      ? [`NGC ${image.tag}: two arch lists for one platform`]
      : []),
    ...image.archLists.flatMap((list) => oneArchListProblems(image, list, toolkit)),
    ...runsWithoutCode(image, data),
  ];
}

function jetsonProblems(image: NgcImageRow, data: KnowledgeBaseData): string[] {
  const name = `NGC ${image.tag}`;
  const jetson = image.jetson;
  if (!jetson)
    return image.platforms.igpu === true ? [`${name}: an -igpu image without its JetPack statement`] : [];
  const problems: string[] = [];
  if (image.platforms.igpu !== true)
    problems.push(`${name}: a JetPack statement for an -igpu image the row does not say is published`);
  if (!image.sources.some((source) => source.url === jetson.source))
    problems.push(`${name}: JetPack statement source ${jetson.source} is not among the row's sources`);
  const tegra = new Set(data.archs.filter((row) => row.tegra).map((row) => row.computeCapability));
  for (const cc of jetson.computeCapabilities)
    if (!tegra.has(cc)) problems.push(`${name}: the -igpu image names ${cc}, not a Jetson capability`);
  return problems;
}

export function ngcContradictions(data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  for (const image of data.ngcImages) {
    const name = `NGC ${image.tag}`;
    if (image.image !== `nvcr.io/nvidia/pytorch:${image.tag}-py3`)
      problems.push(`${name}: image ${image.image} is another tag`);
    const release = /\.nv(\d{2}\.\d{2})/.exec(image.torch)?.[1];
    if (release && release !== image.tag)
      problems.push(`${name}: torch ${image.torch} names release ${release}`);
    if (!image.torchAsPrinted && release)
      problems.push(`${name}: torch carries the image's suffix but is marked not as printed`);
    problems.push(
      ...driverFloorProblems(image, data.cudaToolkits),
      ...gpuProblems(image, data),
      ...archListProblems(image, data),
      ...jetsonProblems(image, data),
    );
  }
  // A later release never ships an older torch series.
  const byTag = [...data.ngcImages].sort((a, b) => newestTagFirst(b, a));
  for (let i = 1; i < byTag.length; i++) {
    const previous = byTag[i - 1]!;
    const current = byTag[i]!;
    if (compareVersions(majorMinor(current.torch), majorMinor(previous.torch)) < 0)
      problems.push(
        `NGC ${current.tag}: torch ${current.torch} is older than ${previous.tag}'s ${previous.torch}`,
      );
  }
  return problems;
}
