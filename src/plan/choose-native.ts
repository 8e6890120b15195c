/**
 * A native uv venv: torch from the PyTorch index variant whose wheels carry SASS for the GPU and
 * whose CUDA the driver runs, the newest such release the project's torch pin accepts.
 */
import type { Requirement } from "../facts/schema.js";
import { DRIVER_FACTS, toolkitSources, type KnowledgeBase, type TorchBuildChoice } from "../kb/index.js";
import { ANY_CURRENT_DRIVER, NEWEST_DRIVER } from "./choose-container.js";
import { compareVersions } from "../util/version.js";
import {
  choosePython,
  pythonPinChangeMessage,
  relaxPythonPins,
  type PythonChoice,
  type PythonInputs,
  type PythonLimit,
  type PythonPinChange,
} from "./choose-python.js";
import type { CudaToolkitRow } from "../kb/types.js";
import { routedVariant, type PackageRoute } from "../project/torch-routes.js";
import { seriesAccepts } from "../project/series.js";
import { torchPin } from "../project/torch-pin.js";
import type { Decision, LineChange, NativeChoice, NativeEnvironment, TargetMachine } from "./types.js";

export interface NativeOutcome {
  choice: NativeChoice | null;
  requiredDriver: string | null;
  decisions: Decision[];
  /** Why native cannot work, when it cannot. */
  rejections: string[];
  /** The project's torch pin turned down, when no build it accepts runs here. */
  torchPinConflict: string | null;
  /** The project's route of torch to a PyTorch variant turned down, when that variant cannot run here. */
  routeConflict: string | null;
  /** Python pins changed because no runnable build has wheels for a Python they allow, with their diffs. */
  pythonPinConflicts: string[];
  /** The same changes as line edits (pins that name a manifest line). */
  pythonLineChanges: LineChange[];
}

interface NativeInputs {
  torchRequirement: Requirement | null;
  /** What a build's series must satisfy (the pin policy's: the pin's public part, or its change). */
  torchSpecifier: string;
  /** The policy changed the pin: the local variant it named goes with it. */
  pinChanged: boolean;
  /** Where the project's environment lives: a uv venv, its pixi workspace or its conda environment. */
  environment: NativeEnvironment;
  /** --python */
  wantedPython: string | null;
  /** requires-python and the conda manifests' python pins. */
  pythonLimits: PythonLimit[];
  /** Every runtime requirement: pinned compiled ones bound the Python. */
  requirements: Requirement[];
  routes: PackageRoute[];
}

/** Builds ordered newest series first and, within a series, oldest CUDA first (PyPI's default on a tie). */
function oldestCudaOfNewest(choices: TorchBuildChoice[]): TorchBuildChoice[] {
  const cudaOf = (c: TorchBuildChoice) => c.build.cuda ?? "0";
  return [...choices].sort(
    (a, b) =>
      compareVersions(b.build.torch, a.build.torch) ||
      compareVersions(cudaOf(a), cudaOf(b)) ||
      Number(b.build.pypiDefault) - Number(a.build.pypiDefault),
  );
}

/** The torch route to `variant`, as the reason quotes it. */
function routeOf(routes: PackageRoute[], variant: string | null): { origin: string; says: string } | null {
  const route = routes.find((r) => r.package === "torch" && r.torchIndex?.variant.tag === variant);
  return route ? { origin: route.origin, says: `sends torch to ${route.indexUrl}` } : null;
}

/** The torch builds with SASS for the GPU, in the order they are tried, and why the others were turned down. */
function nativeCandidates(
  kb: KnowledgeBase,
  target: TargetMachine,
): { native: TorchBuildChoice[]; rejections: string[] } {
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: target.capability,
    gpuName: target.gpuName,
    driverVersion: target.driver ?? ANY_CURRENT_DRIVER,
    cpuArch: target.cpuArch,
  });
  const rejections = evaluation.rejected.map((r) => `torch ${r.build.torch} ${r.build.variant}: ${r.reason}`);
  const ranked = evaluation.choices.filter((c) => c.runs === "sass");
  // Without a driver, the newest torch on the oldest CUDA it is built for: the plan then needs the
  // oldest driver it can (issue 22: cu132 and driver 595 were planned for a machine whose driver
  // nobody gave), and says which in its driver decision.
  const native = target.driverVersion === null ? oldestCudaOfNewest(ranked) : ranked;
  for (const c of evaluation.choices.filter((c) => c.runs !== "sass"))
    rejections.push(
      `torch ${c.build.torch} ${c.build.variant}: only through PTX JIT (${c.via.join(", ")}), not native`,
    );
  return { native, rejections };
}

/** The builds the torch pin accepts; all of them, with the conflict said, where it accepts none that runs. */
function pinnedPool(
  native: TorchBuildChoice[],
  inputs: NativeInputs,
  target: TargetMachine,
): { pool: TorchBuildChoice[]; torchPinConflict: string | null } {
  const spec = inputs.torchSpecifier;
  const torchRequirement = inputs.torchRequirement;
  const accepted = native.filter((c) => spec === "" || seriesAccepts(c.build.torch, spec));
  if (accepted.length > 0 || native.length === 0 || !torchRequirement)
    return { pool: accepted, torchPinConflict: null };
  return {
    pool: native,
    torchPinConflict: `${torchRequirement.raw} (${torchRequirement.origin}): no build of that torch runs natively on compute capability ${target.computeCapability}; torch ${native[0]?.build.torch} ${native[0]?.build.variant} is planned instead`,
  };
}

/** The project's choice of a PyTorch variant, where it makes one, and whether a build of it runs here. */
interface VariantChoice {
  variant: string | null;
  route: { origin: string; says: string } | null;
  /** The builds still in the running: those of the variant where one runs. */
  pool: TorchBuildChoice[];
  routeConflict: string | null;
}

/**
 * A route to one PyTorch variant (cu126), or a local version that names one (==2.7.1+cu128), is
 * the project's choice of CUDA build: kept when a build of that variant runs here, else replaced
 * and reported.
 */
function projectVariant(
  pool: TorchBuildChoice[],
  inputs: NativeInputs,
  target: TargetMachine,
): VariantChoice {
  const { torchRequirement } = inputs;
  const pin = torchRequirement && !inputs.pinChanged ? torchPin(torchRequirement) : null;
  const variant = pin?.variant ?? routedVariant(inputs.routes);
  const route = pin?.variant
    ? { origin: torchRequirement!.origin, says: `pins ${torchRequirement!.raw}` }
    : routeOf(inputs.routes, variant);
  if (!variant || !route) return { variant, route, pool, routeConflict: null };
  const routed = pool.filter((c) => c.build.variant === variant);
  if (routed.length > 0) return { variant, route, pool: routed, routeConflict: null };
  const spec = inputs.torchSpecifier;
  return {
    variant,
    route,
    pool,
    routeConflict: `${route.origin} ${route.says}: no ${variant} build${spec ? ` that ${torchRequirement!.raw} accepts` : ""} runs natively on compute capability ${target.computeCapability} (${target.cpuArch}); the planned index replaces it`,
  };
}

/** The Python limits with each changed pin replaced by the Python it was changed to. */
function relaxedLimits(limits: PythonLimit[], changes: PythonPinChange[] | null): PythonLimit[] {
  if (!changes) return limits;
  return limits.map((limit) => {
    const change = changes.find((c) => c.limit === limit);
    return change ? { ...limit, specifier: `==${change.python}.*` } : limit;
  });
}

/** The torch, python and (where they apply) route and driver decisions of the chosen build. */
function nativeDecisions(
  candidate: TorchBuildChoice,
  python: PythonChoice,
  toolkit: CudaToolkitRow | null,
  target: TargetMachine,
  keptRoute: VariantChoice | null,
): Decision[] {
  const build = candidate.build;
  const requiredDriver = toolkit?.minDriverLinux ?? NEWEST_DRIVER;
  const decisions: Decision[] = [
    {
      topic: "torch",
      choice: `torch ${build.torch}.* from ${build.indexUrl} (${build.variant}, ${build.platform})`,
      // With the driver unknown the query ran for "any driver": say what it needs instead.
      reason: candidate.reasons
        .map((r) =>
          target.driverVersion === null && r.startsWith(`driver ${NEWEST_DRIVER} `)
            ? `CUDA ${build.cuda} needs driver ${requiredDriver} or newer`
            : r,
        )
        .join("; "),
      sources: [...build.sources.map((s) => s.url), ...toolkitSources(toolkit, DRIVER_FACTS)],
    },
    { topic: "python", choice: python.python, reason: python.reason, sources: python.sources },
  ];
  if (keptRoute)
    decisions.push({
      topic: "torch route",
      choice: `kept: ${keptRoute.route!.origin} → ${keptRoute.variant}`,
      reason: `the project ${keptRoute.route!.says}, and its ${keptRoute.variant} build runs here`,
      sources: build.sources.map((s) => s.url),
    });
  if (target.driverVersion === null)
    decisions.push({
      topic: "driver",
      choice: `${requiredDriver} or newer`,
      reason: `the target's driver is not known (pass --driver to plan for yours), so the plan takes torch ${build.torch} on the oldest CUDA it is built for here: CUDA ${build.cuda} needs ${requiredDriver}, and setup-native.sh checks it`,
      sources: toolkitSources(toolkit, DRIVER_FACTS),
    });
  return decisions;
}

/** The Python the plan must use (--python, the target's) and the pins changed so a runnable build has wheels. */
function pythonPlan(
  pool: TorchBuildChoice[],
  inputs: NativeInputs,
  target: TargetMachine,
): { choiceInputs: PythonInputs; changes: PythonPinChange[] } {
  const { wantedPython, pythonLimits } = inputs;
  const wanted = wantedPython ?? target.python;
  // A Python pin no runnable build has wheels for (seed 000's python = "3.9.*" on GB10, where the
  // first torch with sm_120 code needs 3.10) is changed once, to the nearest Python, and said.
  const changes = wanted || pool.length === 0 ? null : relaxPythonPins(pool[0]!.build, pythonLimits);
  return {
    choiceInputs: {
      wanted,
      wantedOrigin: wantedPython ? "--python" : target.python ? "the target's Python" : null,
      pythonLimits: relaxedLimits(pythonLimits, changes),
      requirements: inputs.requirements,
    },
    changes: changes ?? [],
  };
}

export function chooseNative(kb: KnowledgeBase, target: TargetMachine, inputs: NativeInputs): NativeOutcome {
  const { native, rejections } = nativeCandidates(kb, target);
  const { pool: accepted, torchPinConflict } = pinnedPool(native, inputs, target);
  const variantChoice = projectVariant(accepted, inputs, target);
  const { pool, routeConflict } = variantChoice;
  const keptRoute = variantChoice.variant && variantChoice.route && !routeConflict ? variantChoice : null;
  const python = pythonPlan(pool, inputs, target);
  const conflicts = { rejections, torchPinConflict, routeConflict };
  for (const candidate of pool) {
    const pythonChoice = choosePython(kb, candidate.build, python.choiceInputs);
    if (pythonChoice.python === null) {
      rejections.push(`torch ${candidate.build.torch} ${candidate.build.variant}: ${pythonChoice.reason}`);
      continue;
    }
    const build = candidate.build;
    const toolkit = build.cuda ? kb.cudaToolkit(build.cuda) : null;
    return {
      choice: {
        build,
        python: pythonChoice.python,
        environment: inputs.environment,
        indexName: `pytorch-${build.variant}`,
        protected: [{ name: "torch", version: null, why: `torch ${build.torch} from ${build.indexUrl}` }],
      },
      requiredDriver: toolkit?.minDriverLinux ?? NEWEST_DRIVER,
      decisions: nativeDecisions(candidate, pythonChoice, toolkit, target, keptRoute),
      ...conflicts,
      pythonPinConflicts: python.changes.map((c) => pythonPinChangeMessage(c, build, target.gpuName)),
      pythonLineChanges: python.changes.flatMap((c) =>
        c.limit.raw && c.limit.origin ? [{ origin: c.limit.origin, from: c.limit.raw, to: c.to }] : [],
      ),
    };
  }
  return {
    choice: null,
    requiredDriver: null,
    decisions: [],
    ...conflicts,
    pythonPinConflicts: [],
    pythonLineChanges: [],
  };
}
