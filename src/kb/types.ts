/**
 * Knowledge-base row types. Every row carries at least one Source: a documentation URL or a
 * public repository file (pinned to a commit where one was read). Rows we could not source are
 * left out, never guessed.
 */

export interface Source {
  /**
   * A documentation URL, a repository file as https://github.com/OWNER/REPO/blob/COMMIT/PATH, or a
   * page of this repository as the table writes it ("docs/kb-evidence/gpus.md"), which the loader
   * turns into its absolute URL at the release's tag (source-label.ts).
   */
  url: string;
  /** What the source says, briefly, where the URL alone does not make it obvious. */
  note?: string;
}

/**
 * primary: vendor doc or project file; measured: our own run; secondary: maintainer statement or
 * third-party measurement; index: seen on the PyTorch wheel index by `gpuprep kb update` (file
 * names only, so the arch list is unknown).
 */
export type Confidence = "primary" | "measured" | "secondary" | "index";

/**
 * The lowest Linux driver for an architecture: NVIDIA names the first CUDA toolkit that supports it
 * (its "CUDA Toolkit, Driver, and Architecture Matrix"), and that toolkit's GA driver is the first
 * driver shipped with support. A lower bound for every GPU of the capability; a GPU row may state a
 * higher one of its own (HGX B200: 570.133.20).
 */
export interface ArchDriverFloor {
  /** "570.26"; a bare branch ("615") where only the branch is sourced. */
  minDriverLinux: string;
  /** The first CUDA toolkit that supports the architecture ("12.8"). */
  firstCuda: string;
  /** The last driver branch that supports it ("580" for Volta), or null: still supported. */
  lastDriverBranch: string | null;
  /** Always true: the floor is derived from the first toolkit, not stated per GPU. */
  derived: true;
  /** The reasoning, with the facts it rests on. */
  note: string;
  /** One of the row's sources' URLs. */
  source: string;
}

/** One compute capability (e.g. 9.0): its names and what code can target it. */
export interface ArchRow {
  computeCapability: string;
  /** Architecture family name: Volta, Turing, Ampere, Ada, Hopper, Blackwell ... */
  architecture: string;
  /** GPUs with this capability, as examples for messages. */
  examples: string[];
  /** Integrated (Tegra) part: Jetson-class SoC. */
  tegra: boolean;
  /** The lowest driver for GPUs of this capability (not for Tegra parts: JetPack brings theirs). */
  driverFloor?: ArchDriverFloor;
  confidence: Confidence;
  sources: Source[];
}

/** The facts of a CUDA toolkit row that a source can state. */
export type CudaToolkitFact = "minDriverLinux" | "minorCompatMinDriverLinux" | "sassTargets" | "ptxIsa";

/**
 * A toolkit row's source and the facts it states. A decision cites the sources of the facts it
 * rests on: a torch build's driver floor cites the driver tables, not nvcc's target list.
 */
export interface CudaToolkitSource extends Source {
  backs: CudaToolkitFact[];
}

/** A CUDA toolkit release (major.minor) and the Linux driver it needs. */
export interface CudaToolkitRow {
  version: string;
  /** The driver that shipped with the toolkit's GA release (NVIDIA release notes, Table 3). */
  minDriverLinux: string;
  /** Lowest driver that runs it under minor-version compatibility (release notes, Table 2). */
  minorCompatMinDriverLinux: string | null;
  /** Real (sm_) targets nvcc of this version can compile, plain numbers "75", "90", "100". */
  sassTargets?: string[];
  /** PTX ISA version this toolkit emits ("9.0"), used to judge whether a driver can JIT it. */
  ptxIsa?: string;
  confidence: Confidence;
  sources: CudaToolkitSource[];
}

/**
 * One GPU model. Units are in the field names and stated once here: memory sizes as the vendor
 * sells them in decimal gigabytes (GB), nvidia-smi's memory.total in mebibytes (MiB = 2^20 bytes),
 * bandwidth in decimal gigabytes per second (GB/s = 10^9 bytes/s, as datasheets print it), compute
 * in dense TFLOP/s (10^12 operations/s, no sparsity).
 */
export interface GpuRow {
  /** The canonical name, as nvidia-smi prints it where we know it. */
  name: string;
  /** Other spellings users, torch or nvidia-smi use, matched case-insensitively. */
  aliases: string[];
  computeCapability: string;
  architecture: string;
  /**
   * Memory as the vendor markets it, in GB (H100 SXM: 80). Not the usable size: nvidia-smi
   * shows the H100's 80 GB as 81,559 MiB. Use nvidiaSmiMemoryMiB where it is known.
   */
  memoryGB: number | null;
  /**
   * memory.total as `nvidia-smi --query-gpu=memory.total` prints it, in MiB, from a capture or a
   * quoted log; absent where not sourced. integrity.ts checks it against memoryGB.
   */
  nvidiaSmiMemoryMiB?: number | null;
  memoryType: string | null;
  /** Peak memory bandwidth in GB/s (decimal, as datasheets state it: H100 SXM 3,350). */
  memoryBandwidthGBs: number | null;
  /** Dense (no sparsity) peaks in TFLOP/s; null where no datasheet figure was read. */
  peakTflops: { bf16: number | null; fp16: number | null; tf32: number | null; fp32: number | null };
  /**
   * Every precision's peak from NVIDIA's datasheets and architecture whitepapers: TFLOP/s (TOPS for
   * int8), dense and with 2:4 structured sparsity (null where NVIDIA publishes none), or
   * "not-on-arch" where the architecture has no such tensor-core format (its whitepaper lists the
   * formats it has). fp32 and fp64 are the CUDA-core rates where the tensor cores have none. mxfp8
   * and nvfp4 are the block-scaled formats of Blackwell's tensor cores. Absent: not yet read.
   * docs/kb-evidence/gpus.md quotes each figure.
   */
  peaks?: Partial<Record<PeakFormat, PrecisionPeak | "not-on-arch">>;
  /** Integrated systems: the host CPU architecture (null: not tied to one). */
  hostCpuArch: "x86_64" | "aarch64" | null;
  /** CPU and GPU share one coherent memory; true only where a source says so. */
  unifiedMemory: boolean;
  /** Lowest Linux driver that supports this GPU at all, where a source states one for it. */
  minDriverLinux?: string | null;
  /**
   * What minDriverLinux rests on. stated: NVIDIA states it for this GPU (HGX B200). shipped: the
   * driver branch the GPU's own system ships, no earlier driver with support being sourced (GB10).
   */
  minDriverBasis?: "stated" | "shipped";
  /** Jetson-class SoC (integrated, Tegra). */
  tegra?: boolean;
  /**
   * A name several rows share ("H100", "A100", "Orin"): the rows it stands for. Such a row carries
   * what they share; its memory is the smallest variant's (a job that fits it fits each), its peaks
   * and bandwidth only where every variant has the same value.
   */
  variants?: string[];
  sources: Source[];
}

export type PeakFormat =
  "fp64" | "fp32" | "tf32" | "bf16" | "fp16" | "fp8" | "mxfp8" | "fp6" | "fp4" | "nvfp4" | "int8";

export interface PrecisionPeak {
  dense: number | null;
  sparse: number | null;
}

export interface TorchBuildRow {
  torch: string;
  /** cu118, cu128, cu130, cpu ... */
  variant: string;
  platform: "linux-x86_64" | "linux-aarch64";
  cuda: string | null;
  /** As torch.cuda.get_arch_list() prints it: sm_XY for SASS, compute_XY for PTX. */
  archList: string[];
  /**
   * CPython versions ("3.12", "3.14t") with a wheel, as far as a source shows them; `gpuprep kb
   * update` adds the ones the wheel index lists.
   */
  pythons: string[];
  /** NumPy major version the wheels were compiled against (1 or 2). */
  numpyBuildMajor: number | null;
  indexUrl: string;
  /** This variant is what a plain `pip install torch` from PyPI gets on this platform. */
  pypiDefault: boolean;
  /**
   * true where the build script says +PTX but no shipped wheel was inspected (PyTorch strips PTX
   * from some releases only): archList then holds only the SASS entries, so queries never count
   * on PTX for this build.
   */
  ptxUnverified?: boolean;
  confidence: Confidence;
  sources: Source[];
}

/**
 * A conda build of PyTorch: conda-forge's feedstock (package `pytorch`, with `pytorch-gpu` /
 * `pytorch-cpu` as selectors) or PyTorch's own `pytorch` channel (discontinued after 2.5). One row
 * per release series, CUDA variant and platform, with the arch list its build script compiled.
 */
export interface CondaTorchBuildRow {
  channel: "conda-forge" | "pytorch";
  /** Release series, "2.5". */
  torch: string;
  /**
   * The package versions built this way, as the recipe at the source commit names them ("2.5.1");
   * empty where the source gives the series only (every release of it).
   */
  versions: string[];
  /** conda-forge: cuda_compiler_version; pytorch channel: the pytorch-cuda it pairs with. null: a CPU build. */
  cuda: string | null;
  platform: "linux-x86_64" | "linux-aarch64";
  /** As torch.cuda.get_arch_list() would print it: sm_XY for SASS, compute_XY for PTX. */
  archList: string[];
  /** true where the build script says +PTX but nothing shows the package keeps it (archList then has SASS only). */
  ptxUnverified?: boolean;
  /**
   * true where later builds of the same version dropped this variant: they carry higher build
   * numbers, which the solver prefers, so this build is installed only when no current one fits.
   */
  superseded?: boolean;
  confidence: Confidence;
  sources: Source[];
}

/** A CPU architecture as `uname -m` prints it. */
export type NgcCpuArch = "x86_64" | "aarch64";

/** Which images a tag publishes. null: no source read says either way. */
export interface NgcPlatforms {
  /** A linux/amd64 image under the plain tag (YY.MM-py3). */
  amd64: boolean | null;
  /** A linux/arm64 (SBSA) image under the plain tag. */
  arm64: boolean | null;
  /** A separate Jetson (Tegra iGPU) container of this release (the YY.MM-py3-igpu tags); gpuprep plans none. */
  igpu: boolean | null;
}

/**
 * One first-hand run of the image on a GPU, as a log or report quotes it. Only result "ran" on a
 * GPU and CPU architecture can make the row cover that GPU there (queries/ngc.ts, ngcGpuCoverage).
 */
export interface NgcGpuRun {
  /** The GPU's compute capability ("12.1"), as the log or the GPU table gives it. */
  computeCapability: string;
  /** The GPU as the log names it ("NVIDIA GB10"). */
  gpu: string;
  /** The host CPU architecture; null where the log does not say and it is not taken as x86_64. */
  cpuArch: NgcCpuArch | null;
  /**
   * How cpuArch is known. stated: the log names it (uname, a platform string, an x86 or Arm CPU
   * model). machine: the GPU or host exists on one architecture only (GB10, Thor, Orin, GB200,
   * GH200 are aarch64; a Windows/WSL2 host is x86_64). assumed: a discrete GPU whose log names no
   * CPU, taken as x86_64 (the primary platform; never used for aarch64). null when cpuArch is null.
   */
  cpuArchBasis: "stated" | "machine" | "assumed" | null;
  /**
   * ran: work executed on the GPU (a benchmark, training, a matmul) without a support warning.
   * detected: only the device or torch.cuda.is_available() was seen. warned: it ran, but the image
   * or torch warned that the GPU is not (yet) supported. failed: it did not run.
   */
  result: "ran" | "detected" | "warned" | "failed";
  /** The log's own words, short. */
  quote: string;
  /**
   * What the source is, as a user reads it: the kind of file and its date, and its repository where
   * known ("a user's project log, DGX Spark, completed 2026-02-07 (broadinstitute/virnucpro-broad,
   * .planning/...)"; "a GEMM benchmark table (a public file, its repository not recorded)"). Never an
   * index number (src/kb/source-hosts.test.ts, test/docs-links.test.ts).
   */
  what: string;
  /** The row source that holds it: one of the row's sources' URLs. */
  source: string;
}

/** A GPU the release's floor would include but that the image does not serve, with the source's words. */
export interface NgcGpuException {
  computeCapability: string;
  note: string;
  /** One of the row's sources' URLs. */
  source: string;
}

/** The GPUs an image runs on, stated the way NVIDIA states it: a floor, its exceptions, and runs. */
export interface NgcGpuStatement {
  /**
   * NVIDIA's "Release YY.MM supports CUDA compute capability X and later" for this PyTorch image,
   * read on its release-notes page or a verbatim copy of it; null where not read.
   */
  minComputeCapability: string | null;
  exceptions: NgcGpuException[];
  runs: NgcGpuRun[];
}

/**
 * The code torch carries in one platform's image of a tag, written like get_arch_list(): sm_XY for
 * SASS, compute_XY for PTX. Where it comes from is `basis`: the image's own TORCH_CUDA_ARCH_LIST
 * (history, config, environment: the list NVIDIA builds the image's torch with), torch's
 * get_arch_list() printed inside the image, or derived from sourced tags around it (the note says how).
 */
export interface NgcArchList {
  platform: "amd64" | "arm64";
  archList: string[];
  /** The TORCH_CUDA_ARCH_LIST as the source writes it ("7.5 8.0 ... 12.0+PTX"), where it gives one. */
  written: string | null;
  basis: "image-env" | "get-arch-list" | "derived";
  /** How the platform is known: stated by the source, the machine (GB10 is aarch64), or assumed (x86_64). */
  platformBasis: "stated" | "machine" | "assumed";
  note: string;
  /** One of the row's sources' URLs. */
  source: string;
}

/**
 * The Jetson (-igpu) image of a tag: the JetPack NVIDIA builds it for and the Jetson GPUs that JetPack
 * runs on. Derived (its arch list is not sourced); the note says from what.
 */
export interface NgcJetsonImage {
  /** "6.1", "7.0": NVIDIA's Jetson table. */
  jetpack: string;
  /** The Jetson capabilities that JetPack runs on ("8.7" for JetPack 6, "11.0" for 7.0/7.1). */
  computeCapabilities: string[];
  note: string;
  /** One of the row's sources' URLs. */
  source: string;
}

/** One NVIDIA NGC PyTorch container release (nvcr.io/nvidia/pytorch:YY.MM-py3). */
export interface NgcImageRow {
  /** "25.01" */
  tag: string;
  /** "nvcr.io/nvidia/pytorch:25.01-py3" */
  image: string;
  /**
   * torch.__version__ exactly as it prints inside the image ("2.6.0a0+ecf3bae40a.nv25.01"), local
   * build suffix included; where torchAsPrinted is false, the release-notes form without it.
   */
  torch: string;
  /** true when a source shows what torch.__version__ prints in this image. */
  torchAsPrinted: boolean;
  /**
   * The tag's image-index digest ("sha256:..."), where a source names it: the Dockerfile then pins
   * FROM by it. Absent for every row today: no NVIDIA source at hand lists digests per tag.
   */
  digest?: { value: string; source: string } | null;
  /** CUDA toolkit inside the image, as precisely as sourced ("12.8", "13.0.2"). */
  cuda: string;
  /** The lowest Linux driver the image runs on; a bare branch ("580") means that branch's newest patch. */
  minDriverLinux: string | null;
  /**
   * Where minDriverLinux comes from. release-notes: the image's notes name it. cuda-ga-driver: the
   * GA driver of its CUDA (cuda-toolkits.json), what NVIDIA's notes for CUDA 12 images require.
   * cuda-minor-version-compat: the floor of its CUDA major's minor-version compatibility (13.x: 580).
   */
  driverFloorBasis: "release-notes" | "cuda-ga-driver" | "cuda-minor-version-compat" | null;
  ubuntu: string | null;
  python: string | null;
  /** The numpy the image ships (planner protects it), only where a source names the image's own. */
  numpy: string | null;
  platforms: NgcPlatforms;
  /** torch's arch list per platform image, where sourced or derived (empty: none). */
  archLists: NgcArchList[];
  /** The -igpu (Jetson) image's JetPack and GPUs, where platforms.igpu is true; else null. */
  jetson: NgcJetsonImage | null;
  gpus: NgcGpuStatement;
  /** Bundled packages and the versions the sources name ("flash-attn": "2.7.4.post1+25.10"). */
  packages: Record<string, string>;
  /** The pip constraint file the image installs, where the release notes say so. */
  pipConstraintFile: string | null;
  confidence: Confidence;
  sources: Source[];
}

export type ExtensionPlatform = "linux-x86_64" | "linux-aarch64" | "windows-x86_64";

/**
 * One published binary build of an extension (a release, one CUDA variant), as its build files
 * describe it. `targets` are the code objects compiled in, written like torch's get_arch_list():
 * sm_XY[a|f] for SASS, compute_XY for PTX. An empty list means the package ships no precompiled
 * GPU code (it compiles kernels at run time, e.g. triton, DeepSpeed ops).
 */
export interface ExtensionBuild {
  /** The release(s) this describes, as written: "0.0.35", "0.50.1". */
  version: string;
  /** CUDA toolkit the binary was compiled with ("12.8"), or null where not CUDA-specific. */
  cuda: string | null;
  /** The torch requirement its wheel carries, as written ("==2.10.0", ">=2.4,<3"), or null. */
  torch: string | null;
  platforms: ExtensionPlatform[];
  targets: string[];
  /** The URL of the row's source that states this build (must be one of the row's sources). */
  source: string;
}

/**
 * A package whose setup.py reads its own variables: flash-attn compiles only the sm values listed in
 * FLASH_ATTN_CUDA_ARCHS (default 80;90;100;120, no others) and first tries a prebuilt wheel unless
 * FLASH_ATTENTION_FORCE_BUILD=TRUE.
 */
export interface ExtensionBuildEnv {
  /** The variable holding the arch list ("FLASH_ATTN_CUDA_ARCHS"). */
  archVariable: string;
  archSeparator: string;
  /** The only values the build compiles, as sm numbers ("80", "120"). */
  archValues: string[];
  /** Variables that force a local compile instead of a downloaded binary. */
  force: Record<string, string>;
  /** The URL of the row's source that states it (one of the row's sources). */
  source: string;
}

/**
 * A platform where the package's installer picks a binary that cannot work there although the
 * row's builds may list one (e.g. setup.py downloads the x86_64 wheel on aarch64): the verdict
 * there is a source build, with this problem as the reason.
 */
export interface ExtensionInstallHazard {
  platform: ExtensionPlatform;
  /** What goes wrong and what to do instead, in one sentence. */
  problem: string;
  /** The URL of the row's source that shows it (must be one of the row's sources). */
  source: string;
}

/** An extension package and which GPUs/platforms its published binaries serve. */
export interface ExtensionRow {
  /** PyPI name: flash-attn, xformers, bitsandbytes ... */
  name: string;
  /** Short statement per fact, each backed by the row's sources. */
  summary: string;
  /**
   * Compute capabilities the current release's published binaries carry SASS for (or, for a
   * package that compiles at run time, that its compiler targets), as "8.0" etc.
   */
  supportedComputeCapabilities: string[];
  /**
   * Where binary wheels are published: "pypi", "github-releases", "pytorch-index", "source" ...;
   * "jit" marks a package that compiles its GPU kernels on the user's machine at run time.
   */
  distribution: string[];
  /** Platforms its binaries exist for. */
  platforms: ExtensionPlatform[];
  /** Version constraints on torch that its wheels carry, where sourced. */
  torchPins: string | null;
  /**
   * Capabilities no published binary of the current release runs on (neither SASS nor PTX), so
   * users must build from source or use another path. A platform missing from `platforms` also
   * means a source build there, whatever the capability: see extensionVerdict() in
   * queries/extensions.ts, which checks both.
   */
  buildFromSourceFor: string[];
  notes: string[];
  /** Published builds per release and CUDA variant, where the build files were read (optional). */
  builds?: ExtensionBuild[];
  /** How its own build picks GPU targets, where it ignores TORCH_CUDA_ARCH_LIST (optional). */
  buildEnv?: ExtensionBuildEnv;
  /** Platforms where a plain install ends with a binary that cannot load (optional). */
  installHazards?: ExtensionInstallHazard[];
  confidence: Confidence;
  sources: Source[];
}

/**
 * The Pythons a package's published wheels exist for, per set of releases and platform, as its
 * wheel-build configuration at the release tag lists them. Used to choose a venv's Python that
 * every pinned compiled dependency can install without a source build ("numpy<2" means 3.12 at
 * most). Rows exist only where the build files were read.
 */
export interface WheelPythonsRow {
  /** PyPI name, normalized ("numpy"). */
  package: string;
  /** Every release the row describes, exactly ("1.26.0" ... "1.26.5"). */
  releases: string[];
  platforms: Array<"linux-x86_64" | "linux-aarch64">;
  /** "3.12", "3.13t" (free-threaded): one wheel per Python. Empty when anyPythonFrom says it all. */
  pythons: string[];
  /**
   * One wheel serves every Python from this version on (tagged py39-none, py3-none with a
   * requires-python floor, or the cp39-abi3 stable ABI), where the build files say so.
   */
  anyPythonFrom?: string;
  confidence: Confidence;
  sources: Source[];
}

/**
 * A module gpuprep import-checks in a child process (doctor's probe when it is installed,
 * validate always): the compiled extensions projects import next to torch, each row of the
 * extensions table among them (checked by integrity.ts).
 */
export interface ImportCheckRow {
  /** The top-level import name: flash_attn. */
  module: string;
  /** Distributions that install it (PyPI names), to name the owner and its version. */
  distributions: string[];
  /**
   * Whether doctor's probe import-checks it too (validate always does). False where an import
   * costs doctor seconds and a static fact says as much: torchvision's import took 7.9 s on the
   * H100 (docs/benchmarks.md, issue 17), and a torchvision built for another torch is already
   * named by its wheel's exact `torch==` pin (installed-torch-pin-conflict).
   */
  doctor: boolean;
  /** Why an import of it can break while torch imports fine. */
  why: string;
  sources: Source[];
}

/**
 * A named system (DGX Spark, Jetson AGX Thor): its GPU and the driver and CUDA its own software
 * ships, so `init --target dgx-spark` can plan for that driver when none is given.
 */
export interface SystemRow {
  name: string;
  /** Spellings users type ("dgx-spark"), matched like GPU names. */
  aliases: string[];
  /** The GPU row's canonical name ("NVIDIA GB10"). */
  gpu: string;
  /** "DGX OS 7", "JetPack 7 (Jetson Linux 38.x)". */
  software: string;
  /** The driver the system ships with, where sourced; null: not sourced (the plan says so). */
  driver: string | null;
  /** The CUDA version the system's driver reports, where sourced. */
  cuda: string | null;
  confidence: Confidence;
  sources: Source[];
}

/**
 * What a package's own metadata requires, for a range of its releases: requires-python and the torch
 * requirement, read from its pyproject.toml / setup.py at a tag (or, where noted, from a first-hand
 * pip message or a maintainer's statement). One row per range over which both stay the same.
 */
export interface PackageRequirementsRow {
  /** PyPI name, normalized ("flash-attn"). */
  package: string;
  /** The releases the row describes, as a PEP 440 specifier ("==0.7.3", ">=0.49.0,<=0.49.2"). */
  versions: string;
  /**
   * requires-python as declared (">=3.9,<3.15"); "" where the metadata declares none (pip accepts
   * any Python); null where no source was read.
   */
  requiresPython: string | null;
  /**
   * The torch requirement of its install (not of an extra): a PEP 440 specifier ("==2.5.1",
   * ">=2.4,<3"); "any" for an unversioned torch; "none" where it does not depend on torch; null
   * where no source was read.
   */
  torch: string | null;
  /** What the range means for a plan, in a sentence ("" where nothing needs saying). */
  note: string;
  confidence: Confidence;
  sources: Source[];
}

/** Every table of the knowledge base, as loaded (and merged with an overlay). */
export interface KnowledgeBaseData {
  archs: ArchRow[];
  cudaToolkits: CudaToolkitRow[];
  gpus: GpuRow[];
  torchBuilds: TorchBuildRow[];
  ngcImages: NgcImageRow[];
  extensions: ExtensionRow[];
  condaTorchBuilds: CondaTorchBuildRow[];
  wheelPythons: WheelPythonsRow[];
  systems: SystemRow[];
  importChecks: ImportCheckRow[];
  packageRequirements: PackageRequirementsRow[];
}
