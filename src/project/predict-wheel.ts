/**
 * Which torch wheel pip or uv would install from the project's PyPI-side manifests: the pin, the
 * index route (uv sources and indexes, requirements --index-url / --extra-index-url, a direct
 * wheel URL, a local version such as +cu124 or +cpu) and uv.lock, judged against the knowledge
 * base's torch builds (the same rows `kb resolve` ranks).
 */
import type { Requirement } from "../facts/schema.js";
import { evaluateMarker } from "../util/pep508-marker.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { parseCudaVersion } from "../vocabulary/cuda-version.js";
import { torchIndexFromUrl, torchVariantOfCuda, torchVariantOfLocal } from "../vocabulary/torch-variant.js";
import type { InstallPrediction, ManifestLine, PredictedBuild, PredictionContext } from "./types.js";
import { isUvProject } from "./project-view.js";
import { pyprojectLine, requirementsRoute, shortPath, uvRoute, type PackageRoute } from "./routes.js";
import { seriesAccepts } from "./series.js";
import { torchPin } from "./torch-pin.js";

/** The variant tag of a PyTorch index URL ("cu124"), or null for any other index. */
function pytorchIndexVariant(url: string): string | null {
  return torchIndexFromUrl(url)?.variant.tag ?? null;
}

/** A local version pinned in the specifier ("==2.5.1+cu124") or named by a wheel URL. */
function pinnedBuild(requirement: Requirement): { version: string; variant: string | null } | null {
  const pin = torchPin(requirement);
  return pin.exactVersion ? { version: pin.exactVersion, variant: pin.variant } : null;
}

interface WheelOutcome {
  build: PredictedBuild | null;
  unknown: string | null;
}

/**
 * The release series a route installs: the exact version's, else the newest the KB knows on the
 * route that the specifier accepts; null where none does.
 */
function routeSeries(
  ctx: PredictionContext,
  specifier: string,
  exactVersion: string | null,
  variant: string | null,
): string | null {
  if (exactVersion) return majorMinor(exactVersion);
  const known = [...new Set(ctx.kb.data.torchBuilds.map((row) => row.torch))].sort(compareVersions).reverse();
  // PyTorch's cpu index carries every release; other indexes the releases the KB lists for them.
  const onRoute =
    variant && variant !== "cpu"
      ? known.filter((s) =>
          ctx.kb.data.torchBuilds.some(
            (row) => row.platform === ctx.platform && row.torch === s && row.variant === variant,
          ),
        )
      : known;
  return onRoute.find((s) => seriesAccepts(s, specifier)) ?? null;
}

function cpuWheel(series: string, platform: string): PredictedBuild {
  return {
    label: `torch ${series} cpu wheel (${platform})`,
    torch: series,
    cuda: null,
    archList: [],
    sources: [],
  };
}

/**
 * The wheel a route gives: `variant` null means PyPI's own build for the platform. The release is
 * the exact version when one is pinned, else the newest release the KB knows that the specifier
 * accepts (pip and uv install the newest match).
 */
export function resolveWheel(
  ctx: PredictionContext,
  specifier: string,
  exactVersion: string | null,
  variant: string | null,
): WheelOutcome {
  const series = routeSeries(ctx, specifier, exactVersion, variant);
  if (series === null)
    return {
      build: null,
      unknown: `no torch release the knowledge base knows on ${variant ? `the ${variant} index` : "PyPI"} for ${ctx.platform} satisfies "${specifier}"`,
    };
  if (variant === "cpu") return { build: cpuWheel(series, ctx.platform), unknown: null };
  const rows = ctx.kb.data.torchBuilds.filter((row) => row.platform === ctx.platform && row.torch === series);
  const row = variant ? rows.find((r) => r.variant === variant) : rows.find((r) => r.pypiDefault);
  if (!row)
    return {
      build: null,
      unknown: variant
        ? `torch ${series} ${variant} for ${ctx.platform} is not in the knowledge base`
        : `which build PyPI serves for torch ${series} on ${ctx.platform} is not known (no sourced PyPI default)`,
    };
  if (row.cuda !== null && row.archList.length === 0)
    return {
      build: null,
      unknown: `the arch list of torch ${series} ${row.variant} (${ctx.platform}) is not known`,
    };
  return {
    build: {
      label: `torch ${series} ${row.variant} wheel${variant ? "" : " from PyPI"} (${ctx.platform})`,
      torch: series,
      cuda: row.cuda,
      archList: row.archList,
      sources: row.sources.map((s) => s.url),
    },
    unknown: null,
  };
}

function applies(ctx: PredictionContext, requirement: Requirement): boolean {
  return requirement.marker === null || evaluateMarker(requirement.marker, ctx.markers) !== false;
}

interface Route {
  variant: string | null;
  exactVersion: string | null;
  lines: ManifestLine[];
  how: string;
  unknown: string | null;
}

/**
 * The wheel route of one requirement: its own pin (a local version, a wheel URL) wins, then the
 * manifest's route for the package (routes.ts), else PyPI.
 */
export function wheelRoute(requirement: Requirement, packageRoute: PackageRoute | null): Route {
  const url = requirement.url ?? packageRoute?.url ?? null;
  const lines = packageRoute?.lines ?? [];
  const pinned = pinnedBuild({ ...requirement, url });
  if (pinned)
    return {
      variant: pinned.variant,
      exactVersion: pinned.version,
      lines: requirement.url ? [] : lines,
      how: url ? `a wheel URL names ${pinned.version}` : `the pin names the local version ${pinned.version}`,
      unknown: pinned.variant ? null : `${requirement.raw} names no CUDA variant gpuprep can read`,
    };
  if (url)
    return {
      variant: null,
      exactVersion: null,
      lines: requirement.url ? [] : lines,
      how: "",
      unknown: `torch comes from ${url}, a source gpuprep cannot judge`,
    };
  if (packageRoute)
    return {
      variant: packageRoute.torchIndex?.variant.tag ?? null,
      exactVersion: null,
      lines,
      how: packageRoute.how,
      unknown: packageRoute.unknown,
    };
  return { variant: null, exactVersion: null, lines: [], how: "torch comes from PyPI", unknown: null };
}

function prediction(
  ctx: PredictionContext,
  base: Pick<InstallPrediction, "command" | "tool" | "manifest" | "exact">,
  requirement: Requirement,
  route: Route,
  requirementLine: ManifestLine,
): InstallPrediction {
  const outcome: WheelOutcome = route.unknown
    ? { build: null, unknown: route.unknown }
    : resolveWheel(ctx, route.exactVersion ? "" : requirement.specifier, route.exactVersion, route.variant);
  const localPinned = route.exactVersion !== null && route.exactVersion.includes("+");
  return {
    ...base,
    exact: base.exact || localPinned,
    lines: [requirementLine, ...route.lines],
    how: route.how,
    builds: outcome.build ? [outcome.build] : [],
    unknown: outcome.unknown,
    specifier: requirement.specifier,
    exactVersion: route.exactVersion,
    variant: outcome.build
      ? (route.variant ?? (outcome.build.cuda ? cudaTag(outcome.build.cuda) : "cpu"))
      : route.variant,
    fromPypi: route.variant === null && !route.unknown,
    ecosystem: "pypi",
    channel: null,
    condaTorchLine: null,
    systemCuda: null,
  };
}

/** The variant tag of a build's CUDA ("12.8.1" -> "cu128"). */
function cudaTag(cuda: string): string {
  return torchVariantOfCuda(parseCudaVersion(cuda)).tag;
}

/** The torch uv.lock holds, when it holds exactly one build of it. */
function lockedTorch(ctx: PredictionContext): { version: string; registry: string | null } | null {
  const entries = (ctx.facts.project?.uvLock?.packages ?? []).filter((p) => p.name === "torch" && p.version);
  const distinct = new Map(entries.map((p) => [`${p.version}|${p.source}`, p]));
  if (distinct.size !== 1) return null;
  const only = [...distinct.values()][0]!;
  const registry = only.source?.startsWith("registry+") ? only.source.slice("registry+".length) : null;
  return { version: only.version!, registry };
}

/** The route uv.lock decides: the locked torch's version, and the variant of its registry or local version. */
function lockedRoute(
  ctx: PredictionContext,
  lock: { version: string; registry: string | null },
  route: Route,
): Route {
  const variant = lock.registry ? pytorchIndexVariant(lock.registry) : null;
  const lockVariant = torchVariantOfLocal(lock.version)?.tag ?? null;
  const from = lock.registry ? ` from ${lock.registry}` : "";
  return {
    variant: variant ?? lockVariant,
    exactVersion: lock.version,
    lines: [
      ...route.lines,
      {
        origin: shortPath(ctx.projectDir, ctx.facts.project!.uvLock!.path),
        text: `torch ${lock.version}${from}`,
      },
    ],
    how: `uv.lock holds torch ${lock.version}${from}`,
    unknown: null,
  };
}

/**
 * pyproject.toml's torch (the dev group's too in a uv project): `uv sync` through uv's route, or
 * the locked build where uv.lock holds one; `pip install .` where uv is not the project's tool.
 */
function pyprojectPrediction(ctx: PredictionContext): InstallPrediction | null {
  const project = ctx.facts.project!;
  const pyproject = project.pyproject;
  if (!pyproject) return null;
  const uv = isUvProject(ctx.facts);
  const candidates = [...pyproject.dependencies, ...(uv ? (pyproject.dependencyGroups["dev"] ?? []) : [])];
  const requirement = candidates.find((r) => r.normalizedName === "torch" && applies(ctx, r));
  if (!requirement) return null;
  const manifest = shortPath(ctx.projectDir, pyproject.path);
  const lock = uv ? lockedTorch(ctx) : null;
  const keyOf = pyproject.dependencies.includes(requirement)
    ? "project.dependencies"
    : "dependency-groups.dev";
  const line = pyprojectLine(project, `${keyOf}[]=${requirement.raw}`, `"${requirement.raw}"`);
  const route = wheelRoute(requirement, uv ? uvRoute(project, "torch", ctx.markers) : null);
  const base = uv
    ? { command: "uv sync", tool: "uv" as const, manifest, exact: true }
    : { command: "pip install .", tool: "pip" as const, manifest, exact: false };
  return prediction(ctx, base, requirement, lock ? lockedRoute(ctx, lock, route) : route, line);
}

/** `pip install -r FILE` for each requirements file that names torch. */
function requirementsPredictions(ctx: PredictionContext): InstallPrediction[] {
  return ctx.facts.project!.requirementsFiles.flatMap((file) => {
    const requirement = file.requirements.find((r) => r.normalizedName === "torch" && applies(ctx, r));
    if (!requirement) return [];
    const name = shortPath(ctx.projectDir, file.path);
    const route = wheelRoute(requirement, requirementsRoute(file, "torch", name));
    return [
      prediction(
        ctx,
        { command: `pip install -r ${name}`, tool: "pip", manifest: name, exact: false },
        requirement,
        route,
        { origin: requirement.origin, text: requirement.raw },
      ),
    ];
  });
}

export function predictWheelInstalls(ctx: PredictionContext): InstallPrediction[] {
  const fromPyproject = pyprojectPrediction(ctx);
  return [...(fromPyproject ? [fromPyproject] : []), ...requirementsPredictions(ctx)];
}
