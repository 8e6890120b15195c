/**
 * The one module rules and the planner ask compatibility questions through. They hold no tables
 * of their own.
 */
import { newestTagFirst } from "./image-tag.js";
import { imageRelease, parseImageTag } from "../vocabulary/image-tag.js";
import { normalizeName } from "../util/package-name.js";
import { loadPackagedData, mergeOverlay, type KnowledgeBaseData } from "./load.js";
import { defaultOverlayPath, readOverlay } from "./overlay.js";
import { overlayDisabled, recordOverlay } from "./overlay-switch.js";
import type {
  ArchRow,
  CondaTorchBuildRow,
  CudaToolkitRow,
  ExtensionRow,
  GpuRow,
  NgcImageRow,
  TorchBuildRow,
  SystemRow,
  WheelPythonsRow,
} from "./types.js";
import {
  driverSupport,
  formatComputeCapability,
  smDigits,
  type ComputeCapability,
  type DriverSupport,
} from "./compat.js";
import { rowCapability } from "./capability.js";
import { rowDriver } from "./driver.js";
import { compareDriverVersions, type DriverVersion } from "../vocabulary/driver-version.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { firstGpuWith, resolveGpu, type GpuResolution } from "./queries/gpu.js";
import {
  evaluateTorchBuilds,
  type TorchBuildChoice,
  type TorchBuildEvaluation,
  type TorchBuildQuery,
} from "./queries/torch.js";
import {
  judgeNgcImage,
  newestRunningNgcImage,
  ngcCoverageSummary,
  ngcImagesFor,
  ngcImagesForTorch,
  ngcImageVerdicts,
  ngcRunsOn,
  type NgcImageChoice,
  type NgcImageQuery,
  type NgcImageVerdict,
  type NgcJudgeContext,
  type NgcPlatform,
  type NgcRunsOnEntry,
  type NgcVerdictQuery,
} from "./queries/ngc.js";
import {
  checkDriverForGpu,
  driverForTarget,
  minimumDriverFor,
  type GpuDriverCheck,
  type GpuDriverFloor,
  type TargetDriver,
} from "./queries/drivers.js";
import { packageRequirementsFor, type PackageRequirementsAnswer } from "./queries/packages.js";
import { extensionVerdict, type ExtensionQuery, type ExtensionVerdict } from "./queries/extensions.js";
import {
  condaTorchBuildsFor,
  judgeCondaTorchBuild,
  type CondaTorchQuery,
  type CondaTorchVerdict,
} from "./queries/conda-torch.js";
import { wheelPythonsFor, type WheelPythonsAnswer } from "./queries/wheel-pythons.js";
import { systemByName } from "./queries/systems.js";

export type { GpuResolution } from "./queries/gpu.js";
export type {
  TorchBuildChoice,
  TorchBuildEvaluation,
  TorchBuildQuery,
  TorchBuildRejection,
  CpuArch,
} from "./queries/torch.js";
export type {
  NgcImageQuery,
  NgcImageVerdict,
  NgcGpuCoverage,
  NgcImageChoice,
  NgcVerdictQuery,
  NgcPlatform,
  NgcRunsOnEntry,
  NgcCodeVerdict,
  NgcCudaVerdict,
  NgcDriverVerdict,
} from "./queries/ngc.js";
export type { GpuDriverFloor, GpuDriverCheck, TargetDriver } from "./queries/drivers.js";
export type { PackageRequirementsAnswer } from "./queries/packages.js";
export type { ExtensionQuery, ExtensionVerdict } from "./queries/extensions.js";
export type { CondaTorchQuery, CondaTorchVerdict } from "./queries/conda-torch.js";
export type { WheelPythonsAnswer } from "./queries/wheel-pythons.js";
export { hasWheelFor, describeWheelPythons } from "./queries/wheel-pythons.js";
export { tritonGpuName, ptxasAccepts, oldestTritonFor, tritonPtxasTable } from "./queries/triton-ptxas.js";
export { DRIVER_FACTS, toolkitSources } from "./queries/toolkit-sources.js";

export class KnowledgeBase {
  constructor(readonly data: KnowledgeBaseData) {}

  /** The arch row for a compute capability, or null when we have none. */
  arch(cc: ComputeCapability): ArchRow | null {
    const key = formatComputeCapability(cc);
    return this.data.archs.find((row) => row.computeCapability === key) ?? null;
  }

  /** The capability a GPU row (or any KB row) names, parsed once per text (kb/capability.ts). */
  capabilityOf(row: { computeCapability: string }): ComputeCapability {
    return rowCapability(row.computeCapability);
  }

  /** The toolkit row for a CUDA version ("12.8", "12.8.1"), or null when unknown. */
  cudaToolkit(version: string): CudaToolkitRow | null {
    const key = majorMinor(version);
    return this.data.cudaToolkits.find((row) => row.version === key) ?? null;
  }

  /** Does this Linux driver run a CUDA runtime of this version; null when the version is unknown to us. */
  driverSupportFor(
    driverVersion: DriverVersion,
    cudaVersion: string,
  ): { support: DriverSupport; toolkit: CudaToolkitRow } | null {
    const toolkit = this.cudaToolkit(cudaVersion);
    if (!toolkit) return null;
    return { support: driverSupport(driverVersion, toolkit), toolkit };
  }

  /** The newest CUDA toolkit this driver runs natively (its own GA driver or newer). */
  newestNativeCuda(driverVersion: DriverVersion): CudaToolkitRow | null {
    const native = this.data.cudaToolkits.filter(
      (row) => compareDriverVersions(driverVersion, rowDriver(row.minDriverLinux)) >= 0,
    );
    native.sort((a, b) => compareVersions(b.version, a.version));
    return native[0] ?? null;
  }

  /** A GPU by name (nvidia-smi, torch or user spelling) or capability ("12.1", "sm_120"). */
  gpu(nameOrCc: string): GpuRow | null {
    return this.resolveGpu(nameOrCc).match;
  }

  /** The first GPU row of a capability (the row a capability typed as a name stands for), or null. */
  firstGpuWith(cc: ComputeCapability): GpuRow | null {
    return firstGpuWith(this.data.gpus, cc);
  }

  /** Like gpu(), plus the closest rows when nothing matches (for error messages). */
  resolveGpu(text: string): GpuResolution {
    return resolveGpu(this.data.gpus, text);
  }

  /**
   * The build of a torch version ("2.5.1", "2.11", "2.11.0+cu130") for a variant ("cu124") and
   * platform; the variant may be left empty when the version carries it (+cu130).
   */
  torchBuild(torch: string, variant: string, platform: TorchBuildRow["platform"]): TorchBuildRow | null {
    const tag = variant || (torch.includes("+") ? (torch.split("+")[1] ?? "") : "");
    const series = majorMinor(torch);
    return (
      this.data.torchBuilds.find(
        (row) => row.torch === series && row.variant === tag && row.platform === platform,
      ) ?? null
    );
  }

  /** Every build (variant x platform) of a torch release ("2.11" or "2.11.0"). */
  torchBuildsForVersion(torch: string): TorchBuildRow[] {
    const series = majorMinor(torch);
    return this.data.torchBuilds.filter((row) => row.torch === series);
  }

  /** Builds that run on this GPU + driver + CPU + Python, best first, with install commands. */
  torchBuildsFor(query: TorchBuildQuery): TorchBuildChoice[] {
    return this.evaluateTorchBuilds(query).choices;
  }

  /** torchBuildsFor plus every build of the platform that was turned down, with the reason. */
  evaluateTorchBuilds(query: TorchBuildQuery): TorchBuildEvaluation {
    const gpuMinDriver = this.gpuFloor(query.computeCapability, query.gpuName);
    return evaluateTorchBuilds(this.data.torchBuilds, this.data.cudaToolkits, query, gpuMinDriver);
  }

  /**
   * The lowest driver for GPUs of this capability: the highest of the GPU rows' own floors (e.g.
   * HGX B200: 570.133.20) and the architecture's (the first CUDA toolkit's GA driver, e.g. 12.0:
   * 570.26); null where neither is known or the capability is a Jetson's (JetPack brings its driver).
   */
  minDriverForCapability(cc: ComputeCapability): string | null {
    const key = formatComputeCapability(cc);
    const arch = this.arch(cc);
    if (arch?.tegra) return null;
    const floors = this.data.gpus
      .filter((row) => row.computeCapability === key && row.minDriverLinux)
      .map((row) => row.minDriverLinux as string);
    if (arch?.driverFloor) floors.push(arch.driverFloor.minDriverLinux);
    floors.sort((a, b) => compareDriverVersions(rowDriver(a), rowDriver(b)));
    return floors[floors.length - 1] ?? null;
  }

  /** The rows a shared name stands for ("H100": SXM, PCIe, NVL), or [] for a row of its own. */
  gpuVariants(gpu: GpuRow): GpuRow[] {
    return (gpu.variants ?? [])
      .map((name) => this.data.gpus.find((row) => row.name === name))
      .filter((row): row is GpuRow => row !== undefined);
  }

  /**
   * The lowest driver that supports a GPU (a row, or a name resolved like gpu()), whatever CUDA runs
   * on it, with the last branch that still supports old architectures; null for an unknown name.
   */
  minimumDriverFor(gpu: GpuRow | string): GpuDriverFloor | null {
    const row = typeof gpu === "string" ? this.gpu(gpu) : gpu;
    if (!row) return null;
    return minimumDriverFor(row, this.arch(this.capabilityOf(row)), this.gpuVariants(row));
  }

  /** Is this driver too old (or, for Volta on R590+, too new) for this GPU, independent of CUDA. */
  checkDriverForGpu(gpu: GpuRow, driverVersion: DriverVersion): GpuDriverCheck {
    const floor = minimumDriverFor(gpu, this.arch(this.capabilityOf(gpu)), this.gpuVariants(gpu));
    return checkDriverForGpu(floor, driverVersion);
  }

  /** Is this driver too old for this GPU (null when we know no floor). */
  driverTooOldForGpu(gpu: GpuRow, driverVersion: DriverVersion): boolean | null {
    const check = this.checkDriverForGpu(gpu, driverVersion);
    return check.verdict === "unknown" ? null : check.verdict === "too-old";
  }

  /**
   * The driver to plan for on a named target without --driver: the named system's own driver where
   * sourced (dgx-spark: 580.82.09), else the lowest its GPU needs; null with the reason otherwise.
   */
  driverForTarget(name: string): TargetDriver {
    const system = this.system(name);
    const gpu = system ? this.gpu(system.gpu) : this.gpu(name);
    return driverForTarget(system, gpu ? this.minimumDriverFor(gpu) : null);
  }

  /** requires-python and the torch requirement of a package release (or of all its known releases). */
  packageRequirements(name: string, version?: string | null): PackageRequirementsAnswer {
    return packageRequirementsFor(this.data.packageRequirements, name, version);
  }

  /** Conda builds of torch (conda-forge, the pytorch channel) for a channel and platform, newest first. */
  condaTorchBuilds(
    channel: CondaTorchBuildRow["channel"],
    platform: CondaTorchBuildRow["platform"],
  ): CondaTorchBuildRow[] {
    return this.data.condaTorchBuilds
      .filter((row) => row.channel === channel && row.platform === platform)
      .sort((a, b) => compareVersions(b.torch, a.torch));
  }

  /** How one conda build fares on a GPU and driver (SASS, PTX JIT, no code, CPU-only). */
  judgeCondaTorchBuild(
    build: CondaTorchBuildRow,
    computeCapability: ComputeCapability,
    driverVersion: DriverVersion | null,
  ): CondaTorchVerdict {
    return judgeCondaTorchBuild(build, this.data.cudaToolkits, computeCapability, driverVersion);
  }

  /** Conda CUDA builds of torch that run on this GPU + driver + platform, best first. */
  condaTorchBuildsFor(query: CondaTorchQuery): CondaTorchVerdict[] {
    return condaTorchBuildsFor(this.data.condaTorchBuilds, this.data.cudaToolkits, query);
  }

  /**
   * The NGC image to run here: the newest that covers the GPU on its CPU and runs under this driver
   * natively, else the newest it runs at all (minor-version compatibility); null when none does.
   */
  preferredNgcImage(query: NgcImageQuery): NgcImageVerdict | null {
    const running = this.judgeNgcImages(query).filter((verdict) => verdict.runs);
    return running.find((verdict) => verdict.driver === "native") ?? running[0] ?? null;
  }

  /** An NGC PyTorch image by tag ("25.01", "25.01-py3" or the full nvcr.io reference). */
  ngcImage(tag: string): NgcImageRow | null {
    const parsed = parseImageTag(tag);
    if (!parsed) return null;
    const release = imageRelease(parsed);
    return this.data.ngcImages.find((row) => row.tag === release) ?? null;
  }

  /**
   * The NGC image(s) an installed torch came from, matched on torch.__version__ as the image prints
   * it ("2.9.0a0+145a3a7bda.nv25.10"; pip's normalized "nv24.7" and a trailing build id match too).
   * More than one only where two tags ship the same build and the version does not say which.
   */
  ngcImagesForTorch(installedTorch: string): NgcImageRow[] {
    return ngcImagesForTorch(this.data.ngcImages, installedTorch);
  }

  /** What judging an NGC image needs from the other tables for this GPU. */
  private ngcContext(computeCapability: ComputeCapability, gpuName?: string): NgcJudgeContext {
    return {
      tegraCapabilities: this.data.archs.filter((row) => row.tegra).map((row) => row.computeCapability),
      gpuMinDriver: this.gpuFloor(computeCapability, gpuName),
    };
  }

  /**
   * The driver floor to hold builds to: the named GPU's own (GB200: 570.26, not HGX B200's
   * 570.133.20, which NVIDIA states for that system), else the highest of its capability's rows.
   */
  private gpuFloor(computeCapability: ComputeCapability, gpuName?: string): string | null {
    const row = gpuName ? this.gpu(gpuName) : null;
    if (row) {
      const floor = this.minimumDriverFor(row);
      if (floor && floor.basis !== "jetpack") return floor.minDriverLinux;
    }
    return this.minDriverForCapability(computeCapability);
  }

  /**
   * Every NGC image, on each platform image this GPU could use (amd64, or arm64 and for a Jetson the
   * -igpu image), with its verdict: the code (SASS / PTX JIT / cannot run, from the image's arch
   * list, sourced or derived), whether its CUDA knows the GPU, how the driver runs it (natively,
   * under minor-version compatibility, or not; none judged without a driver), and the sources.
   * Newest tag first.
   */
  ngcImageVerdicts(query: NgcVerdictQuery): NgcImageChoice[] {
    const context = this.ngcContext(query.computeCapability, query.gpuName);
    return ngcImageVerdicts(this.data.ngcImages, this.data.cudaToolkits, query, context);
  }

  /** The newest NGC image that runs here (one the driver runs natively first), or null. */
  newestRunningNgcImage(query: NgcVerdictQuery): NgcImageChoice | null {
    return newestRunningNgcImage(this.ngcImageVerdicts(query));
  }

  /** For each platform image of a tag, the capabilities (of the arch table) it runs on, driver aside. */
  ngcRunsOn(image: NgcImageRow): Record<NgcPlatform, NgcRunsOnEntry[]> {
    return ngcRunsOn(
      image,
      this.data.cudaToolkits,
      this.data.archs.map((row) => row.computeCapability),
      this.data.archs.filter((row) => row.tegra).map((row) => row.computeCapability),
    );
  }

  /** NGC images that run on this GPU + driver + CPU architecture, newest first. */
  ngcImagesFor(query: NgcImageQuery): NgcImageRow[] {
    return ngcImagesFor(
      this.data.ngcImages,
      this.data.cudaToolkits,
      query,
      this.ngcContext(query.computeCapability),
    );
  }

  /** Every NGC image with the verdict for this machine and its reason, newest first. */
  judgeNgcImages(query: NgcImageQuery): NgcImageVerdict[] {
    const context = this.ngcContext(query.computeCapability);
    return this.data.ngcImages
      .map((image) => judgeNgcImage(image, this.data.cudaToolkits, query, context))
      .sort((a, b) => newestTagFirst(a.image, b.image));
  }

  /** The capabilities (from the arch table) an image covers on each CPU architecture, and by which rule. */
  ngcCoverage(image: NgcImageRow): ReturnType<typeof ngcCoverageSummary> {
    return ngcCoverageSummary(
      image,
      this.data.cudaToolkits,
      this.data.archs.map((row) => row.computeCapability),
      this.data.archs.filter((row) => row.tegra).map((row) => row.computeCapability),
    );
  }

  /** An extension package row by PyPI name (case and -/_ insensitive). */
  extension(name: string): ExtensionRow | null {
    const wanted = normalizeName(name);
    return this.data.extensions.find((row) => normalizeName(row.name) === wanted) ?? null;
  }

  /**
   * For each extension row (or the named ones): does a published binary run on this GPU and
   * platform, does the package compile at run time, or must it be built from source.
   */
  extensionVerdicts(query: ExtensionQuery, names?: string[]): ExtensionVerdict[] {
    const rows = names
      ? names.map((name) => this.extension(name)).filter((row): row is ExtensionRow => row !== null)
      : this.data.extensions;
    return rows.map((row) => extensionVerdict(row, query));
  }

  /** The Pythons a package's wheels exist for, over the releases a specifier accepts ("numpy", "<2"). */
  wheelPythons(
    packageName: string,
    specifier: string,
    platform: WheelPythonsRow["platforms"][number],
  ): WheelPythonsAnswer {
    return wheelPythonsFor(this.data.wheelPythons, packageName, specifier, platform);
  }

  /** A named system ("dgx-spark", "Jetson AGX Thor") with the driver it ships, or null. */
  system(name: string): SystemRow | null {
    return systemByName(this.data.systems, name);
  }

  /**
   * The oldest CUDA toolkit whose nvcc compiles SASS for exactly this capability (12.1 -> 12.9),
   * from the toolkits' sourced target lists; null where none lists it.
   */
  oldestCudaCompiling(cc: ComputeCapability): CudaToolkitRow | null {
    const sm = smDigits(cc);
    return (
      [...this.data.cudaToolkits]
        .sort((a, b) => compareVersions(a.version, b.version))
        .find((row) => row.sassTargets?.includes(sm)) ?? null
    );
  }
}

let cached: KnowledgeBase | null = null;
/** Whether `cached` was loaded with the overlay switched off: --no-overlay after a load loads again. */
let cachedOverlayOff = false;

export { disableKnowledgeBaseOverlay, knowledgeBaseOverlay, type OverlayInUse } from "./overlay-switch.js";

/** The packaged knowledge base merged with the user's overlay (loaded once per process). */
export function loadKnowledgeBase(): KnowledgeBase {
  if (cached && cachedOverlayOff === overlayDisabled()) return cached;
  const path = defaultOverlayPath();
  const overlay = overlayDisabled() ? null : readOverlay(path);
  recordOverlay(
    overlay
      ? {
          path,
          fetchedAt: overlay.fetchedAt,
          indexUrl: overlay.indexUrl,
          torchBuilds: overlay.torchBuilds.length,
        }
      : null,
  );
  cached = new KnowledgeBase(mergeOverlay(loadPackagedData(), overlay));
  cachedOverlayOff = overlayDisabled();
  return cached;
}
export { importChecks } from "./import-checks.js";
