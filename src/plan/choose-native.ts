/**
 * A native uv venv: torch from the PyTorch index variant whose wheels carry SASS for the GPU and
 * whose CUDA the driver runs, the newest such release the project's torch pin accepts.
 */
import type { Requirement } from "../facts/schema.js";
import { DRIVER_FACTS, toolkitSources, type KnowledgeBase, type TorchBuildChoice } from "../kb/index.js";
import { NEWEST_DRIVER } from "./choose-container.js";
import { compareVersions } from "../util/version.js";
import { choosePython, pythonPinChangeMessage, relaxPythonPins, type PythonLimit } from "./choose-python.js";
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

export interface NativeInputs {
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

export function chooseNative(kb: KnowledgeBase, target: TargetMachine, inputs: NativeInputs): NativeOutcome {
  const { torchRequirement, wantedPython, pythonLimits } = inputs;
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: target.computeCapability,
    gpuName: target.gpuName,
    driverVersion: target.driverVersion ?? NEWEST_DRIVER,
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
  const pin = torchRequirement && !inputs.pinChanged ? torchPin(torchRequirement) : null;
  const spec = inputs.torchSpecifier;
  const accepted = native.filter((c) => spec === "" || seriesAccepts(c.build.torch, spec));
  let torchPinConflict: string | null = null;
  let pool: TorchBuildChoice[] = accepted;
  if (accepted.length === 0 && native.length > 0 && torchRequirement) {
    torchPinConflict = `${torchRequirement.raw} (${torchRequirement.origin}): no build of that torch runs natively on compute capability ${target.computeCapability}; torch ${native[0]?.build.torch} ${native[0]?.build.variant} is planned instead`;
    pool = native;
  }
  // A route to one PyTorch variant (cu126), or a local version that names one (==2.7.1+cu128), is
  // the project's choice of CUDA build: kept when a build of that variant runs here, else replaced
  // and reported.
  const variant = pin?.variant ?? routedVariant(inputs.routes);
  const route = pin?.variant
    ? { origin: torchRequirement!.origin, says: `pins ${torchRequirement!.raw}` }
    : routeOf(inputs.routes, variant);
  let routeConflict: string | null = null;
  if (variant && route) {
    const routed = pool.filter((c) => c.build.variant === variant);
    if (routed.length > 0) pool = routed;
    else
      routeConflict = `${route.origin} ${route.says}: no ${variant} build${spec ? ` that ${torchRequirement!.raw} accepts` : ""} runs natively on compute capability ${target.computeCapability} (${target.cpuArch}); the planned index replaces it`;
  }
  const pythonWanted = wantedPython ?? target.python;
  // A Python pin no runnable build has wheels for (seed 000's python = "3.9.*" on GB10, where the
  // first torch with sm_120 code needs 3.10) is changed once, to the nearest Python, and said.
  const pythonChanges =
    pythonWanted || pool.length === 0 ? null : relaxPythonPins(pool[0]!.build, pythonLimits);
  const limits = pythonChanges
    ? pythonLimits.map((limit) => {
        const change = pythonChanges.find((c) => c.limit === limit);
        return change ? { ...limit, specifier: `==${change.python}.*` } : limit;
      })
    : pythonLimits;
  for (const candidate of pool) {
    const pythonChoice = choosePython(kb, candidate.build, {
      wanted: pythonWanted,
      wantedOrigin: wantedPython ? "--python" : target.python ? "the target's Python" : null,
      pythonLimits: limits,
      requirements: inputs.requirements,
    });
    if (pythonChoice.python === null) {
      rejections.push(`torch ${candidate.build.torch} ${candidate.build.variant}: ${pythonChoice.reason}`);
      continue;
    }
    const python = pythonChoice.python;
    const build = candidate.build;
    const toolkit = build.cuda ? kb.cudaToolkit(build.cuda) : null;
    const requiredDriver = toolkit?.minDriverLinux ?? NEWEST_DRIVER;
    const sources = [...build.sources.map((s) => s.url), ...toolkitSources(toolkit, DRIVER_FACTS)];
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
        sources,
      },
      {
        topic: "python",
        choice: python,
        reason: pythonChoice.reason,
        sources: pythonChoice.sources,
      },
    ];
    if (variant && route && !routeConflict)
      decisions.push({
        topic: "torch route",
        choice: `kept: ${route.origin} → ${variant}`,
        reason: `the project ${route.says}, and its ${variant} build runs here`,
        sources: build.sources.map((s) => s.url),
      });
    if (target.driverVersion === null)
      decisions.push({
        topic: "driver",
        choice: `${requiredDriver} or newer`,
        reason: `the target's driver is not known (pass --driver to plan for yours), so the plan takes torch ${build.torch} on the oldest CUDA it is built for here: CUDA ${build.cuda} needs ${requiredDriver}, and setup-native.sh checks it`,
        sources: toolkitSources(toolkit, DRIVER_FACTS),
      });
    return {
      choice: {
        build,
        python,
        environment: inputs.environment,
        indexName: `pytorch-${build.variant}`,
        protected: [{ name: "torch", version: null, why: `torch ${build.torch} from ${build.indexUrl}` }],
      },
      requiredDriver,
      decisions,
      rejections,
      torchPinConflict,
      routeConflict,
      pythonPinConflicts: (pythonChanges ?? []).map((c) => pythonPinChangeMessage(c, build, target.gpuName)),
      pythonLineChanges: (pythonChanges ?? []).flatMap((c) =>
        c.limit.raw && c.limit.origin ? [{ origin: c.limit.origin, from: c.limit.raw, to: c.to }] : [],
      ),
    };
  }
  return {
    choice: null,
    requiredDriver: null,
    decisions: [],
    rejections,
    torchPinConflict,
    routeConflict,
    pythonPinConflicts: [],
    pythonLineChanges: [],
  };
}
