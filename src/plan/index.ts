/**
 * makePlan: the strategy (NGC container or native uv venv), the base, the protected packages, the
 * project's conflicting pins and the source builds, every decision with its reason and sources.
 * A pure function of the project's manifests, the target and the knowledge base.
 */
import type { ProjectFacts, Requirement } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { UserError } from "../errors.js";
import { basename } from "node:path";
import { projectName } from "./project-name.js";
import { chooseContainer, type ContainerOutcome } from "./choose-container.js";
import { chooseNative, type NativeOutcome } from "./choose-native.js";
import { dependencyPythonLimits } from "./choose-python.js";
import { normalizeName } from "../util/package-name.js";
import { projectRequirements } from "../project/requirements.js";
import type { CondaPythonPin } from "../project/conda-requirements.js";
import { satisfies } from "../util/pep440.js";
import { applyProtection, UNKNOWN_VERSION } from "./protect.js";
import { decideSourceBuilds, type SourceBuildDecision } from "./source-builds.js";
import { versionParts } from "../util/version.js";
import { nvccNeeded } from "./nvcc.js";
import { decideJitToolchain } from "./jit-toolchain.js";
import { torchRoutes, type PackageRoute } from "../project/torch-routes.js";
import { linuxMarkers } from "../project/markers.js";
import type {
  BuildToolkit,
  ContainerChoice,
  Decision,
  InitOptions,
  LineChange,
  NativeChoice,
  NativeEnvironment,
  PinConflict,
  Plan,
  PlanBase,
  ProtectedPackage,
  Strategy,
  TargetMachine,
} from "./types.js";
import { decideStrategy, type StrategyFailure, type StrategyReason } from "./strategy.js";
import {
  decideTorchPin,
  isPinChange,
  pinChangeConflict,
  type PinChange,
  type RunnableTorch,
} from "./torch-pin-policy.js";
import { ANY_CURRENT_DRIVER } from "./choose-container.js";

export type { Plan, InitOptions, TargetMachine, Decision, Strategy } from "./types.js";

function firstReasons(lines: string[]): string {
  return lines.slice(0, 3).join("; ") + (lines.length > 3 ? `; and ${lines.length - 3} more` : "");
}

/**
 * NGC images trail PyPI by a release or two, a price worth their tuned CUDA libraries and bundled
 * extensions; an image further behind (the newest sourced one may be years old) loses to native.
 */
const MAX_NGC_LAG = 2;

/** How many minor releases torch `older` is behind `newer` ("2.9.0a0+145a3a7bda" vs "2.13"); Infinity across majors. */
function minorReleasesBehind(older: string, newer: string): number {
  const [oMajor = 0, oMinor = 0] = versionParts(older);
  const [nMajor = 0, nMinor = 0] = versionParts(newer);
  if (oMajor !== nMajor) return oMajor < nMajor ? Infinity : 0;
  return Math.max(0, nMinor - oMinor);
}

interface Candidates {
  container: ContainerOutcome;
  native: NativeOutcome;
  /** The pins each base would not obey (empty when it keeps them all, or when it cannot run). */
  containerDrops: PinConflict[];
  nativeDrops: PinConflict[];
  /** The torch pin the policy changed for both (no build of it runs here); null when kept. */
  pinChange: PinChange | null;
}

/** The pins a plan would drop, as the reason names them. */
function droppedPins(drops: PinConflict[]): string {
  return drops.map((c) => c.requirement?.raw ?? c.pin ?? c.message.split(":")[0]).join(", ");
}

/** The sentence for a strategy the decision took (strategy.ts), from what the candidates offered. */
function strategySentence(
  reason: StrategyReason,
  strategy: Strategy,
  target: TargetMachine,
  candidates: Candidates,
  lag: number,
): string {
  const { container, native, containerDrops } = candidates;
  const image = container.choice?.image;
  switch (reason) {
    case "asked":
      return `asked with --strategy ${strategy}`;
    case "container-drops-pins":
      return `the newest NGC image that runs here and accepts the torch pin, ${image?.tag}, would not obey ${droppedPins(containerDrops)}; a native venv keeps every pin (use --strategy container to take the image anyway)`;
    case "native-drops-pins":
      return `a native venv would not obey ${droppedPins(candidates.nativeDrops)}; the NGC image ${image?.tag} keeps every pin (use --strategy native for a uv venv anyway)`;
    case "image-runs":
      return `an NGC PyTorch image covers ${target.gpuName}${container.excludedByPin.length > 0 ? " with a torch the project accepts" : ""}: NVIDIA's build of torch and its CUDA libraries for this GPU, kept intact in the image (use --strategy native for a uv venv)`;
    case "image-too-old":
      return `the newest NGC image that runs here, ${image?.tag}, brings torch ${image?.torch}, ${lag === Infinity ? "a major release" : `${lag} minor releases`} behind the native torch ${native.choice?.build.torch}; images more than ${MAX_NGC_LAG} behind are passed over (use --strategy container to take it anyway)`;
    case "pin-excludes-images":
      return `every NGC image that runs here brings a torch the project excludes: ${container.pinRejection}; a PyTorch wheel it accepts runs natively`;
    case "no-image":
      return `no NGC image runs here (${whyNot(container.rejections, "the knowledge base has no NGC image rows")}); a PyTorch wheel runs natively`;
  }
}

function whyNot(rejections: string[], fallback: string): string {
  return rejections.length > 0 ? firstReasons(rejections) : fallback;
}

/** The one-line error for a strategy that cannot be planned, with the hint that says what would run. */
function strategyError(
  failure: StrategyFailure,
  target: TargetMachine,
  { container, native }: Candidates,
): UserError {
  const where = `compute capability ${target.computeCapability}, ${target.cpuArch}, driver ${target.driverVersion ?? "not given"}`;
  const containerWhyNot = whyNot(container.rejections, "the knowledge base has no NGC image rows");
  const nativeWhyNot = whyNot(native.rejections, "no PyTorch build is known");
  switch (failure) {
    case "pin-excludes-every-image":
    case "no-image-runs":
      return new UserError(
        failure === "pin-excludes-every-image"
          ? `no NGC PyTorch image that runs on ${target.gpuName} (${where}) has a torch the project accepts: ${container.pinRejection}`
          : `no NGC PyTorch image runs on ${target.gpuName} (${where}): ${containerWhyNot}`,
        native.choice
          ? `--strategy native plans torch ${native.choice.build.torch} ${native.choice.build.variant} from the PyTorch index instead`
          : `a native plan fails here too (${nativeWhyNot}); pass the driver you will have with --driver`,
      );
    case "no-native-build":
      return new UserError(
        `no PyTorch build runs natively on ${target.gpuName} (${where}): ${nativeWhyNot}`,
        "try --strategy container, or a newer driver (--driver)",
      );
    case "nothing-runs":
      return new UserError(
        `neither an NGC image nor a PyTorch wheel runs on ${target.gpuName} (${where})`,
        `container: ${containerWhyNot}. native: ${nativeWhyNot}`,
      );
  }
}

function pickStrategy(
  options: InitOptions,
  target: TargetMachine,
  candidates: Candidates,
): { strategy: Strategy; decision: Decision } {
  const { container, native } = candidates;
  const lag =
    container.choice && native.choice
      ? minorReleasesBehind(container.choice.image.torch, native.choice.build.torch)
      : 0;
  const outcome = decideStrategy({
    asked: options.strategy,
    imageChosen: container.choice !== null,
    pinExcludesImages: container.pinRejection !== null,
    nativeChosen: native.choice !== null,
    // The pin policy's change is in both plans: only what one drops and the other keeps weighs.
    // A pin on a package whose version in the image is not known is not a certain break.
    containerDrops: candidates.containerDrops.filter(
      (c) => !isPinChange(c, candidates.pinChange) && c.provided !== UNKNOWN_VERSION,
    ).length,
    nativeDrops: candidates.nativeDrops.filter((c) => !isPinChange(c, candidates.pinChange)).length,
    imageLag: lag,
    maxImageLag: MAX_NGC_LAG,
  });
  if (!outcome.ok) throw strategyError(outcome.failure, target, candidates);
  const reason = strategySentence(outcome.reason, outcome.strategy, target, candidates, lag);
  return {
    strategy: outcome.strategy,
    decision: { topic: "strategy", choice: outcome.strategy, reason, sources: [] },
  };
}

/**
 * The torch pin's own conflict when the policy changed it or a container moved it: said once, in
 * place of the generic "does not accept the base's torch" line protection would write.
 */
function torchPinConflicts(
  requirements: Requirement[],
  special: PinConflict | null,
): { others: Requirement[]; conflicts: PinConflict[] } {
  if (!special) return { others: requirements, conflicts: [] };
  return { others: requirements.filter((r) => r.normalizedName !== "torch"), conflicts: [special] };
}

/** What a container on this image would not obey: pins on what it ships, torch routes, a conda python pin. */
function containerConflicts(
  container: ContainerOutcome,
  inputs: PlanInputs,
  pinChange: PinConflict | null,
): PinConflict[] {
  const { requirements, routes, pythonPins } = inputs;
  const choice = container.choice;
  if (!choice) return [];
  const torch = torchPinConflicts(requirements, pinChange ?? container.movedPin);
  const conflicts = [
    ...torch.conflicts,
    ...applyProtection(torch.others, choice.protected, choice.ref, true).conflicts,
  ];
  const imagePython = choice.image.python;
  for (const pin of pythonPins)
    if (imagePython && satisfies(imagePython, pin.specifier) === false)
      conflicts.push({
        requirement: null,
        pin: `${pin.raw} (${pin.origin})`,
        provided: imagePython,
        message: `${pin.raw} (${pin.origin}): the image's Python is ${imagePython}, and the container uses it`,
      });
  for (const route of routes.filter((r) => r.torchIndex !== null))
    conflicts.push({
      requirement: null,
      pin: route.origin,
      provided: choice.image.torch,
      message: `${route.origin}: ${route.package} from ${route.indexUrl} (${route.torchIndex?.variant.tag}) is not used; the image's own build ${route.package === "torch" ? `torch ${choice.image.torch} ` : ""}is kept`,
    });
  return conflicts;
}

/** What the native plan would not obey: a torch pin no runnable build satisfies, a route to a variant that cannot run. */
function nativeConflicts(
  native: NativeOutcome,
  inputs: PlanInputs,
  pinChange: PinConflict | null,
): PinConflict[] {
  const { requirements, torchRequirement } = inputs;
  const choice = native.choice;
  if (!choice) return [];
  const torch = torchPinConflicts(requirements, pinChange);
  const conflicts = [
    ...torch.conflicts,
    ...applyProtection(torch.others, choice.protected, "the planned torch").conflicts,
  ];
  if (native.torchPinConflict)
    conflicts.push({
      requirement: torchRequirement,
      provided: choice.build.torch,
      message: native.torchPinConflict,
    });
  if (native.routeConflict)
    conflicts.push({ requirement: null, provided: choice.build.variant, message: native.routeConflict });
  for (const message of native.pythonPinConflicts)
    conflicts.push({ requirement: null, pin: message.split(" (")[0], provided: choice.python, message });
  return conflicts;
}

/** What the plan reads from the project: its requirements, torch pin, routes and Python limits. */
interface PlanInputs {
  requirements: Requirement[];
  torchRequirement: Requirement | null;
  routes: PackageRoute[];
  pythonPins: CondaPythonPin[];
  duplicates: string[];
  notes: string[];
}

function readPlanInputs(project: ProjectFacts, target: TargetMachine, options: InitOptions): PlanInputs {
  const { requirements, duplicates, notes, pythonPins } = projectRequirements(project);
  const routes = torchRoutes(
    project,
    linuxMarkers(target.cpuArch, options.python ?? target.python),
    new Set(requirements.map((r) => r.normalizedName)),
  );
  const torchRequirement = requirements.find((r) => r.normalizedName === "torch") ?? null;
  return { requirements, torchRequirement, routes, pythonPins, duplicates, notes };
}

/**
 * A project managed by pixi alone (a pixi.toml, no pyproject.toml or requirements files) keeps its
 * workspace natively: pixi.toml is edited and `pixi install` run, never a uv venv beside it. One
 * managed by an environment.yml alone keeps its conda environment the same way.
 */
function nativeEnvironment(project: ProjectFacts): NativeEnvironment {
  if (project.pyproject !== null || project.requirementsFiles.length > 0) return "uv";
  const manifests = project.condaManifests ?? [];
  if (manifests.some((m) => m.kind === "pixi" && m.path.endsWith("pixi.toml"))) return "pixi";
  if (manifests.some((m) => m.kind === "conda-environment")) return "conda";
  return "uv";
}

/** Package versions uv.lock holds (one per name where it locks exactly one). */
function lockedVersions(project: ProjectFacts): Map<string, string> {
  const out = new Map<string, string>();
  const packages = project.uvLock?.packages ?? [];
  for (const entry of packages) {
    if (!entry.version) continue;
    const name = normalizeName(entry.name);
    const versions = new Set(packages.filter((p) => normalizeName(p.name) === name).map((p) => p.version));
    if (versions.size === 1) out.set(name, entry.version);
  }
  return out;
}

/** What runs on the target, for the pin policy: native builds' series and running images' torch. */
function runnableTorch(kb: KnowledgeBase, target: TargetMachine): RunnableTorch {
  const query = {
    computeCapability: target.capability,
    gpuName: target.gpuName,
    driverVersion: target.driver ?? ANY_CURRENT_DRIVER,
    cpuArch: target.cpuArch,
  };
  return {
    knownSeries: kb.data.torchBuilds.map((row) => row.torch),
    nativeSeries: kb
      .evaluateTorchBuilds(query)
      .choices.filter((c) => c.runs === "sass")
      .map((c) => c.build.torch),
    imageTorches: kb
      .ngcImageVerdicts({ ...query, driverVersion: target.driver })
      .filter((v) => v.runs)
      .map((v) => v.image.torch),
  };
}

function weighCandidates(
  kb: KnowledgeBase,
  project: ProjectFacts,
  target: TargetMachine,
  options: InitOptions,
  inputs: PlanInputs,
): Candidates {
  const { requirements, torchRequirement, routes, pythonPins } = inputs;
  const policy = decideTorchPin(project, torchRequirement, runnableTorch(kb, target));
  const container = chooseContainer(kb, target, requirements, {
    requirement: torchRequirement,
    specifier: policy.specifier,
    takeNearestSeries: options.strategy === "container",
    changed: policy.change !== null,
  });
  const native = chooseNative(kb, target, {
    torchRequirement,
    torchSpecifier: policy.specifier,
    pinChanged: policy.change !== null,
    environment: nativeEnvironment(project),
    wantedPython: options.python,
    pythonLimits: [
      ...(project.pyproject?.requiresPython
        ? [{ specifier: project.pyproject.requiresPython, raw: null, origin: null }]
        : []),
      ...pythonPins,
      ...dependencyPythonLimits(kb, requirements, lockedVersions(project)),
    ],
    requirements,
    routes,
  });
  const change = policy.change ? pinChangeConflict(policy.change, target.gpuName) : null;
  return {
    container,
    native,
    pinChange: policy.change,
    containerDrops: containerConflicts(container, inputs, change),
    nativeDrops: nativeConflicts(native, inputs, change),
  };
}

/** The base the strategy chose: the image or the torch build, with what it protects and needs. */
type ChosenBase =
  | { strategy: "container"; choice: ContainerChoice; outcome: ContainerOutcome; conflicts: PinConflict[] }
  | { strategy: "native"; choice: NativeChoice; outcome: NativeOutcome; conflicts: PinConflict[] };

function chosenBase(strategy: Strategy, candidates: Candidates): ChosenBase {
  const { container, native } = candidates;
  // pickStrategy only returns a strategy whose candidate exists.
  if (strategy === "container" && container.choice)
    return { strategy, choice: container.choice, outcome: container, conflicts: candidates.containerDrops };
  if (strategy === "native" && native.choice)
    return { strategy, choice: native.choice, outcome: native, conflicts: candidates.nativeDrops };
  throw new Error(`internal: ${strategy} was chosen without a candidate`);
}

function protectedBy(base: ChosenBase): { packages: ProtectedPackage[]; name: string } {
  return base.strategy === "container"
    ? { packages: base.choice.protected, name: base.choice.ref }
    : { packages: base.choice.protected, name: "the planned torch" };
}

/**
 * A driver past the last branch that supports the GPU (Volta ends with R580) runs nothing on it,
 * whatever the build: said before any candidate is weighed.
 */
function refuseUnsupportedDriver(kb: KnowledgeBase, target: TargetMachine): void {
  if (!target.driver) return;
  const gpu = kb.gpu(target.gpuName);
  if (!gpu) return;
  const check = kb.checkDriverForGpu(gpu, target.driver);
  if (check.verdict === "too-new")
    throw new UserError(
      `driver ${target.driverVersion} does not support ${target.gpuName}: ${check.reason}`,
      "plan for a driver of a supported branch with --driver (nvidia-smi shows yours)",
    );
}

/** Natively there is no service to add: a Jupyter server on the host would run outside any container. */
function refuseNativeJupyter(options: InitOptions, strategy: Strategy): void {
  if (options.jupyter && strategy === "native")
    throw new UserError(
      "init: --jupyter adds a Jupyter service to the container setup, and this plan is native",
      "add --strategy container for the service (127.0.0.1 only, token required), or drop --jupyter and run `uv pip install jupyterlab && .venv/bin/jupyter lab` yourself",
    );
}

function targetDecisions(kb: KnowledgeBase, target: TargetMachine): Decision[] {
  const decisions: Decision[] = [
    {
      topic: "target",
      choice: `${target.gpuName}, compute capability ${target.computeCapability}, ${target.cpuArch}`,
      reason: `from ${target.origin}`,
      sources: kb.gpu(target.gpuName)?.sources.map((s) => s.url) ?? [],
    },
  ];
  if (target.driverSource) decisions.push(target.driverSource);
  return decisions;
}

/** A native pixi or conda plan does use its tool: the renaming note says so instead of the contrary. */
function ownEnvironmentNote(note: string, base: ChosenBase): string {
  const tool = base.strategy === "native" ? base.choice.environment : "uv";
  if (tool === "uv") return note;
  return note.replace(
    `; the plan does not use ${tool} itself`,
    `; natively the plan edits that file and installs with ${tool}`,
  );
}

function planWarnings(inputs: PlanInputs, base: ChosenBase, options: InitOptions): string[] {
  const warnings = [
    ...inputs.duplicates.map((d) => `required twice: ${d}; the first is used`),
    ...inputs.notes.map((note) => ownEnvironmentNote(note, base)),
  ];
  if (options.python && base.strategy === "container")
    warnings.push(`--python ${options.python} is ignored in a container: the image's own Python is used`);
  // Every NGC image ships numpy; where the KB does not know its version, a numpy pin cannot be
  // judged here: it stays in the requirements, and pip checks it at build time against the image's
  // own (base-packages.txt), failing the build rather than running on a numpy the project excludes.
  const image = base.strategy === "container" ? base.choice.image : null;
  for (const pin of inputs.requirements.filter((r) => r.normalizedName === "numpy" && r.specifier !== ""))
    if (image && image.numpy === null)
      warnings.push(
        `${pin.raw}: the knowledge base does not know the numpy of ${base.strategy === "container" ? base.choice.ref : image.image}; the build pins the image's own numpy and pip stops there if it is outside ${pin.specifier}`,
      );
  return warnings;
}

function toolkitDecision(buildToolkit: BuildToolkit | null): Decision[] {
  if (!buildToolkit) return [];
  return [
    {
      topic: "nvcc for source builds",
      choice: `CUDA ${buildToolkit.minimum} or a newer ${buildToolkit.major}.x`,
      reason: buildToolkit.reason,
      sources: buildToolkit.sources,
    },
  ];
}

function serviceDecisions(options: InitOptions, strategy: Strategy): Decision[] {
  const decisions: Decision[] = [];
  if (options.jupyter)
    decisions.push({
      topic: "jupyter",
      choice: "a jupyter service on 127.0.0.1:8888 with a token",
      reason:
        "asked with --jupyter; bound to the loopback interface and never without a token (JUPYTER_TOKEN)",
      sources: [],
    });
  if (strategy === "container")
    decisions.push({
      topic: "shared memory",
      choice: options.shmSize === "host" ? "ipc: host" : `shm_size ${options.shmSize ?? "16g"}`,
      reason:
        options.shmSize === "host"
          ? "asked with --shm-size host: the container shares the host's IPC namespace (its shared memory and semaphores)"
          : `${options.shmSize ? "asked with --shm-size" : "by default"}, because DataLoader workers pass batches through /dev/shm and Docker's default 64 MB makes them die with a bus error; ipc: host would also share the host's shared memory and semaphores (ask with --shm-size host)`,
      sources: [],
    });
  return decisions;
}

/** The source builds for the chosen base: in a container, a package the image provides is kept unless asked for. */
function sourceBuildsFor(
  kb: KnowledgeBase,
  inputs: PlanInputs,
  target: TargetMachine,
  options: InitOptions,
  guarded: { packages: ProtectedPackage[] },
  strategy: Strategy,
): SourceBuildDecision {
  return decideSourceBuilds(
    kb,
    inputs.requirements,
    options.buildFromSource,
    target.capability,
    target.cpuArch,
    strategy === "container" ? new Set(guarded.packages.map((p) => p.name)) : new Set(),
  );
}

/** The compilers the plan needs beside its base: nvcc for source builds, a ptxas that knows the GPU for triton. */
function toolchainsFor(
  kb: KnowledgeBase,
  target: TargetMachine,
  base: ChosenBase,
  sourceBuilds: SourceBuildDecision,
): { buildToolkit: BuildToolkit | null; jit: ReturnType<typeof decideJitToolchain> } {
  const baseCuda = base.strategy === "container" ? base.choice.image.cuda : base.choice.build.cuda;
  const buildToolkit = sourceBuilds.builds.some((b) => b.needsNvcc)
    ? nvccNeeded(kb, baseCuda, target.capability)
    : null;
  const jit = decideJitToolchain(
    kb,
    target.capability,
    base.strategy,
    sourceBuilds.askedJitPackages.length > 0,
  );
  return { buildToolkit, jit };
}

/** The manifest lines the plan changes: the torch pin the policy changed, the Python pins a native plan moved. */
function planLineChanges(candidates: Candidates, base: ChosenBase): LineChange[] {
  const pinChange = candidates.pinChange;
  return [
    ...(pinChange ? [{ origin: pinChange.origin, from: pinChange.from, to: pinChange.to }] : []),
    ...(base.strategy === "native" ? base.outcome.pythonLineChanges : []),
  ];
}

export function makePlan(
  kb: KnowledgeBase,
  project: ProjectFacts,
  target: TargetMachine,
  options: InitOptions,
): Plan {
  // First: a name that cannot be written into the generated files stops init before anything else.
  const named = projectName(project.pyproject?.name, basename(project.dir));
  refuseUnsupportedDriver(kb, target);
  const inputs = readPlanInputs(project, target, options);
  const candidates = weighCandidates(kb, project, target, options, inputs);
  const { strategy, decision } = pickStrategy(options, target, candidates);
  refuseNativeJupyter(options, strategy);
  const base = chosenBase(strategy, candidates);
  const guarded = protectedBy(base);
  const protection = applyProtection(inputs.requirements, guarded.packages, guarded.name);
  const sourceBuilds = sourceBuildsFor(kb, inputs, target, options, guarded, strategy);
  const built = new Set(sourceBuilds.builds.map((b) => b.name.toLowerCase()));
  const { buildToolkit, jit } = toolchainsFor(kb, target, base, sourceBuilds);
  const common: PlanBase = {
    lineChanges: planLineChanges(candidates, base),
    project: {
      dir: project.dir,
      name: named.name,
      hasPyproject: project.pyproject !== null,
      requirementsFiles: project.requirementsFiles.map((f) => f.path),
    },
    target,
    requiredDriver: base.outcome.requiredDriver ?? "",
    install: protection.install.filter((r) => !built.has(r.normalizedName)),
    conflicts: base.conflicts,
    sourceBuilds: sourceBuilds.builds,
    buildToolkit,
    jitToolchain: jit?.toolchain ?? null,
    options,
    decisions: [
      ...targetDecisions(kb, target),
      decision,
      ...base.outcome.decisions,
      ...sourceBuilds.decisions,
      ...toolkitDecision(buildToolkit),
      ...(jit ? [jit.decision] : []),
      ...serviceDecisions(options, strategy),
    ],
    warnings: [
      ...planWarnings(inputs, base, options),
      ...sourceBuilds.warnings,
      ...(named.note ? [named.note] : []),
    ],
  };
  return base.strategy === "container"
    ? { ...common, strategy: "container", container: base.choice }
    : { ...common, strategy: "native", native: base.choice };
}
