/**
 * A Plan: every decision `gpuprep init` takes for one project on one machine, each with its reason
 * and the knowledge-base sources behind it. Generators turn a Plan into files; nothing here
 * touches the disk.
 */
import type { Requirement } from "../facts/schema.js";
import type { CpuArch } from "../kb/index.js";
import type { NgcImageRow, TorchBuildRow } from "../kb/types.js";
import type { ComputeCapability } from "../vocabulary/compute-capability.js";
import type { DriverVersion } from "../vocabulary/driver-version.js";

export type Strategy = "container" | "native";

/** TRITON_PTXAS_PATH for a GPU triton's bundled ptxas does not know (plan/jit-toolchain.ts). */
export interface JitToolchain {
  /** The ptxas in the image's toolkit; null natively, where the setup script finds one. */
  ptxasPath: string | null;
  /** The ptxas target that must be known, "sm_121a". */
  target: string;
  /** The oldest CUDA whose ptxas compiles it ("12.9"). */
  minimumCuda: string;
  /** TRITON_PTXAS_PATH, and TRITON_PTXAS_BLACKWELL_PATH from 10.0 on. */
  variables: string[];
}

/** The machine the setup is for: from its facts, a saved snapshot, or a GPU name. */
export interface TargetMachine {
  /** How we know it: "this machine", "facts.json (captured ...)", "profile dgx-spark". */
  origin: string;
  gpuName: string;
  /** "12.1", as the plan document and generated files write it. */
  computeCapability: string;
  /**
   * The same capability as a value, parsed once where the target is made (plan/target.ts): what the
   * knowledge-base queries and the planner take. Left out of the plan document (planDocument).
   */
  capability: ComputeCapability;
  cpuArch: CpuArch;
  /** null when not known (a profile without --driver): the plan then states the driver it needs. */
  driverVersion: string | null;
  /**
   * The same driver as a value, parsed once where the target is made (plan/target.ts): what the
   * knowledge-base queries and the planner take. Left out of the plan document (planDocument).
   */
  driver: DriverVersion | null;
  unifiedMemory: boolean;
  /** The target's own Python, when gathered from it ("3.12.3"). */
  python: string | null;
  /** Whether the target has a usable NVIDIA GPU right now (facts); profiles assume it does. */
  gpuPresent: boolean;
  /**
   * How the driver was chosen when the user gave none for a named system (the driver DGX Spark
   * ships), or why it stays unknown (a system whose driver is not sourced); absent otherwise.
   */
  driverSource?: Decision;
}

export interface Decision {
  topic: string;
  choice: string;
  reason: string;
  /** KB source URLs (or repository files) the decision rests on. */
  sources: string[];
}

/** A package the base (image or chosen torch build) provides and the project must not replace. */
export interface ProtectedPackage {
  name: string;
  /** Exact version where the KB knows it; null: pinned at build time to whatever the base has. */
  version: string | null;
  why: string;
}

/**
 * A pin of the project the plan does not obey: a requirement that would replace a protected
 * package (left out of the install), or a route of torch to an index variant that cannot run here.
 */
export interface PinConflict {
  /** null for a route ([tool.uv.sources], --index-url), which is not a requirement line. */
  requirement: Requirement | null;
  /** For a pin that is not a requirement line (a conda `python` pin): the line and where it is. */
  pin?: string;
  provided: string;
  message: string;
}

/** An extension built from source for exactly the target's architecture. */
export interface SourceBuild {
  /** PyPI name. */
  name: string;
  /** What pip builds: the project's requirement as written, or the bare name. */
  requirement: string;
  /** TORCH_CUDA_ARCH_LIST value, e.g. "12.1". */
  archList: string;
  /**
   * The package's own build variables, for builds that ignore TORCH_CUDA_ARCH_LIST (knowledge
   * base): { FLASH_ATTN_CUDA_ARCHS: "120", FLASH_ATTENTION_FORCE_BUILD: "TRUE" }; empty otherwise.
   */
  env: Record<string, string>;
  reason: string;
  /** The project requires it (so its own install step builds it); false: only asked for by name. */
  inProject: boolean;
  /**
   * Compiled with nvcc against torch (a torch C++/CUDA extension), so the build checks nvcc first;
   * false for packages the KB says compile their kernels at run time (triton brings its own ptxas)
   * and for packages the KB does not know.
   */
  needsNvcc: boolean;
}

/** The nvcc source builds need, checked by the generated scripts before any build starts. */
export interface BuildToolkit {
  /** CUDA major nvcc must have ("13"). */
  major: string;
  /** Lowest nvcc release accepted ("12.9"). */
  minimum: string;
  reason: string;
  sources: string[];
}

export interface InitOptions {
  strategy: Strategy | "auto";
  jupyter: boolean;
  nonRoot: boolean;
  /** Extra volumes "HOST:CONTAINER[:ro]". */
  volumes: string[];
  /** Extensions the user asked to build from source. */
  buildFromSource: string[];
  /** A local wheelhouse (relative to the project) for offline builds. */
  wheelhouse: string | null;
  /** A package index to use instead of PyPI (air-gapped mirror). */
  indexUrl: string | null;
  /**
   * Size of the container's /dev/shm ("16g"); "host": share the host's IPC namespace (ipc: host);
   * null: generate/paths.ts's DEFAULT_SHM_SIZE.
   */
  shmSize: string | null;
  /** Python version for a native venv ("3.12"); null: chosen from the build and the project. */
  python: string | null;
}

export interface ContainerChoice {
  image: NgcImageRow;
  /** The reference to pull: the tag's image for this CPU, or its -igpu image on a Jetson. */
  ref: string;
  protected: ProtectedPackage[];
  /**
   * Modules the project requires that the image itself provides (torchvision ...), imported at the
   * end of the build so an image without them fails there, not at the user's first import.
   */
  imports: string[];
  /** The NGC reference `ref` mirrors, where --registry-mirror moved the pull (plan/base-image.ts). */
  mirrorOf?: string;
  /** The digest the registry named for `ref`'s tag (init --fetch): FROM is pinned by it. */
  digest?: { value: string; source: string };
}

/** Where a native plan installs: a uv venv, a pixi workspace, or a conda environment. */
export type NativeEnvironment = "uv" | "pixi" | "conda";

export interface NativeChoice {
  build: TorchBuildRow;
  /**
   * The environment the project keeps: a uv venv, its own pixi workspace (pixi.toml edited to a
   * torch that runs, then `pixi install`), or its conda environment (environment.yml edited, then
   * `conda env update --prune`), so a pixi or conda project stays one (issue 22 item 6).
   */
  environment: NativeEnvironment;
  /** Python for the venv, "3.12". */
  python: string;
  /** The uv index name the project's pyproject gets for torch, e.g. "pytorch-cu130". */
  indexName: string;
  protected: ProtectedPackage[];
}

/** A manifest line the plan changed (a pin no build on the GPU satisfies), said once as a diff. */
export interface LineChange {
  /** "pixi.toml:12", "requirements.txt:1" */
  origin: string;
  from: string;
  to: string;
}

/** What every plan has, whichever the strategy. */
export interface PlanBase {
  /** Pins the plan changed because nothing on the GPU satisfies them; a pixi plan writes them into pixi.toml. */
  lineChanges: LineChange[];
  project: { dir: string; name: string; hasPyproject: boolean; requirementsFiles: string[] };
  target: TargetMachine;
  /** The driver the chosen setup needs at least (the host's when known). */
  requiredDriver: string;
  /** The project's requirements that get installed (protected ones and source builds left out). */
  install: Requirement[];
  conflicts: PinConflict[];
  sourceBuilds: SourceBuild[];
  /** What nvcc the source builds need; null without source builds. */
  buildToolkit: BuildToolkit | null;
  /** The ptxas triton must use on this GPU (its bundled one does not know it); null where it does. */
  jitToolchain: JitToolchain | null;
  options: InitOptions;
  decisions: Decision[];
  warnings: string[];
}

export interface ContainerPlan extends PlanBase {
  strategy: "container";
  container: ContainerChoice;
}

export interface NativePlan extends PlanBase {
  strategy: "native";
  native: NativeChoice;
}

/**
 * A plan is one of the two setups, never neither: a generator that needs the image takes a
 * ContainerPlan, so "needs a container plan" cannot happen at run time.
 */
export type Plan = ContainerPlan | NativePlan;

/** The plan as `init --json` writes it (schema gpuprep.init v2): both keys, the unused one null. */
export type PlanDocument = Omit<PlanBase, "target"> & {
  /** The target as text only: the parsed capability and driver are the planner's, not the document's. */
  target: Omit<TargetMachine, "capability" | "driver">;
  strategy: Strategy;
  container: ContainerChoice | null;
  native: NativeChoice | null;
};

/** The image of a container plan; null for a native one. */
export function containerOf(plan: Plan): ContainerChoice | null {
  return plan.strategy === "container" ? plan.container : null;
}

/** The torch build of a native plan; null for a container one. */
export function nativeOf(plan: Plan): NativeChoice | null {
  return plan.strategy === "native" ? plan.native : null;
}

export function planDocument(plan: Plan): PlanDocument {
  const { capability: _parsed, driver: _parsedDriver, ...target } = plan.target;
  return plan.strategy === "container"
    ? { ...plan, target, native: null }
    : { ...plan, target, container: null };
}
