/**
 * Which torch wheel pip or uv would install from the project's PyPI-side manifests: the pin, the
 * index route (uv sources and indexes, requirements --index-url / --extra-index-url, a direct
 * wheel URL, a local version such as +cu124 or +cpu) and uv.lock, judged against the knowledge
 * base's torch builds (the same rows `kb resolve` ranks).
 */
import { basename, relative } from "node:path";
import type { Requirement } from "../facts/schema.js";
import { satisfies } from "../util/pep440.js";
import { evaluateMarker } from "../util/pep508-marker.js";
import { compareVersions, majorMinor } from "../util/version.js";
import type {
  InstallPrediction,
  ManifestLine,
  PredictedBuild,
  PredictionContext,
} from "./install-prediction.js";
import { isUvProject } from "./project-view.js";

/** "https://download.pytorch.org/whl/cu124" -> "cu124"; null for any other index. */
export function pytorchIndexVariant(url: string): string | null {
  const match = /^https?:\/\/download(?:-r2)?\.pytorch\.org\/whl\/(cu\d{2,3}|cpu)\/?$/.exec(url.trim());
  return match?.[1] ?? null;
}

/** Could some release of this series (2.7 -> 2.7.0 .. 2.7.30) satisfy the specifier? */
function seriesAccepts(series: string, specifier: string): boolean {
  if (specifier === "") return true;
  for (let patch = 0; patch <= 30; patch++)
    if (satisfies(`${series}.${patch}`, specifier) === true) return true;
  return false;
}

/** A local version pinned in the specifier ("==2.5.1+cu124") or named by a wheel URL. */
function pinnedBuild(requirement: Requirement): { version: string; variant: string | null } | null {
  const local = /^===?\s*([0-9][0-9.]*)\+([a-z0-9.]+)$/i.exec(requirement.specifier.replace(/%2B/gi, "+"));
  if (local) return { version: `${local[1]}+${local[2]}`, variant: local[2] ?? null };
  if (requirement.url) {
    const decoded = decodeURIComponent(requirement.url);
    const wheel = /\/torch-([0-9][0-9.]*)(?:\+([a-z0-9.]+))?-[^/]*\.whl$/i.exec(decoded);
    if (!wheel) return null;
    const fromPath = /\/whl\/(cu\d{2,3}|cpu)\//.exec(decoded)?.[1] ?? null;
    const variant = wheel[2] ?? fromPath;
    return { version: `${wheel[1]}${wheel[2] ? `+${wheel[2]}` : ""}`, variant };
  }
  return null;
}

export interface WheelOutcome {
  build: PredictedBuild | null;
  unknown: string | null;
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
  const rows = ctx.kb.data.torchBuilds.filter((row) => row.platform === ctx.platform);
  const where = variant ? `the ${variant} index` : "PyPI";
  let series: string | null;
  if (exactVersion) series = majorMinor(exactVersion);
  else {
    const known = [...new Set(ctx.kb.data.torchBuilds.map((row) => row.torch))]
      .sort(compareVersions)
      .reverse();
    // PyTorch's cpu index carries every release; other indexes the releases the KB lists for them.
    const onRoute =
      variant && variant !== "cpu"
        ? known.filter((s) => rows.some((row) => row.torch === s && row.variant === variant))
        : known;
    series = onRoute.find((s) => seriesAccepts(s, specifier)) ?? null;
    if (!series)
      return {
        build: null,
        unknown: `no torch release the knowledge base knows on ${where} for ${ctx.platform} satisfies "${specifier}"`,
      };
  }
  if (variant === "cpu")
    return {
      build: {
        label: `torch ${series} cpu wheel (${ctx.platform})`,
        torch: series,
        cuda: null,
        archList: [],
        sources: [],
      },
      unknown: null,
    };
  const row = variant
    ? rows.find((r) => r.torch === series && r.variant === variant)
    : rows.find((r) => r.torch === series && r.pypiDefault);
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

function shortPath(ctx: PredictionContext, path: string): string {
  const rel = relative(ctx.projectDir, path);
  return rel && !rel.startsWith("..") ? rel : basename(path);
}

interface Route {
  variant: string | null;
  exactVersion: string | null;
  lines: ManifestLine[];
  how: string;
  unknown: string | null;
}

/** A route given by the requirement itself (local version, wheel URL) or by an index URL. */
export function routeFor(
  requirement: Requirement,
  indexUrl: string | null,
  indexLine: ManifestLine | null,
): Route {
  const pinned = pinnedBuild(requirement);
  if (pinned)
    return {
      variant: pinned.variant,
      exactVersion: pinned.version,
      lines: [],
      how: requirement.url
        ? `a wheel URL names ${pinned.version}`
        : `the pin names the local version ${pinned.version}`,
      unknown: pinned.variant ? null : `${requirement.raw} names no CUDA variant gpuprep can read`,
    };
  if (requirement.url)
    return {
      variant: null,
      exactVersion: null,
      lines: [],
      how: "",
      unknown: `torch comes from ${requirement.url}, a source gpuprep cannot judge`,
    };
  if (indexUrl) {
    const variant = pytorchIndexVariant(indexUrl);
    return {
      variant,
      exactVersion: null,
      lines: indexLine ? [indexLine] : [],
      how: `torch comes from ${indexUrl}`,
      unknown: variant ? null : `torch comes from ${indexUrl}, an index gpuprep cannot judge`,
    };
  }
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

function cudaTag(cuda: string): string {
  return `cu${cuda.replace(".", "")}`;
}

function pyprojectLine(ctx: PredictionContext, key: string, text: string): ManifestLine {
  const pyproject = ctx.facts.project?.pyproject;
  const line = pyproject?.lines?.[key];
  const file = pyproject ? shortPath(ctx, pyproject.path) : "pyproject.toml";
  return { origin: line !== undefined ? `${file}:${line}` : `${file}:${key.split("[]")[0]}`, text };
}

/** uv's route for torch: [tool.uv.sources] (an index by name, a URL), else the first non-explicit [[tool.uv.index]]. */
function uvRoute(ctx: PredictionContext, requirement: Requirement): Route {
  const uv = ctx.facts.project!.pyproject!.uv;
  const raw = uv.sources["torch"];
  const entries = (Array.isArray(raw) ? raw : raw ? [raw] : []) as Record<string, unknown>[];
  const entry = entries.find(
    (e) => typeof e["marker"] !== "string" || evaluateMarker(e["marker"], ctx.markers) !== false,
  );
  const sourceLine = pyprojectLine(ctx, "tool.uv.sources.torch", `torch = ${JSON.stringify(raw)}`);
  const indexRoute = (i: number, why: string): Route => {
    const index = uv.indexes[i]!;
    const route = routeFor(
      requirement,
      index.url,
      pyprojectLine(ctx, `tool.uv.index[${i}].url`, `url = "${index.url}"`),
    );
    return { ...route, how: `${why}: ${index.url}` };
  };
  if (entry) {
    if (typeof entry["index"] === "string") {
      const i = uv.indexes.findIndex((index) => index.name === entry["index"]);
      if (i < 0)
        return {
          variant: null,
          exactVersion: null,
          lines: [sourceLine],
          how: "",
          unknown: `[tool.uv.sources] names an index "${entry["index"]}" that [[tool.uv.index]] does not define`,
        };
      const route = indexRoute(i, `[tool.uv.sources] sends torch to the index "${entry["index"]}"`);
      return { ...route, lines: [sourceLine, ...route.lines] };
    }
    if (typeof entry["url"] === "string") {
      const route = routeFor({ ...requirement, url: entry["url"] }, null, null);
      return { ...route, lines: [sourceLine] };
    }
    return {
      variant: null,
      exactVersion: null,
      lines: [sourceLine],
      how: "",
      unknown: "torch comes from a local path or a git source; its build is not known",
    };
  }
  const first = uv.indexes.findIndex((index) => !index.explicit);
  if (first >= 0) return indexRoute(first, "uv looks for torch in the first [[tool.uv.index]] before PyPI");
  return routeFor(requirement, null, null);
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

export function predictWheelInstalls(ctx: PredictionContext): InstallPrediction[] {
  const project = ctx.facts.project!;
  const out: InstallPrediction[] = [];
  const pyproject = project.pyproject;
  if (pyproject) {
    const uv = isUvProject(ctx.facts);
    const candidates = [...pyproject.dependencies, ...(uv ? (pyproject.dependencyGroups["dev"] ?? []) : [])];
    const requirement = candidates.find((r) => r.normalizedName === "torch" && applies(ctx, r));
    const manifest = shortPath(ctx, pyproject.path);
    const lock = uv ? lockedTorch(ctx) : null;
    if (requirement) {
      const keyOf = pyproject.dependencies.includes(requirement)
        ? "project.dependencies"
        : "dependency-groups.dev";
      const line = pyprojectLine(ctx, `${keyOf}[]=${requirement.raw}`, `"${requirement.raw}"`);
      const route = uv ? uvRoute(ctx, requirement) : routeFor(requirement, null, null);
      if (lock) {
        const variant = lock.registry ? pytorchIndexVariant(lock.registry) : null;
        const lockRoute: Route = {
          variant: variant ?? (lock.version.includes("+") ? lock.version.split("+")[1]! : null),
          exactVersion: lock.version,
          lines: [
            ...route.lines,
            {
              origin: shortPath(ctx, project.uvLock!.path),
              text: `torch ${lock.version}${lock.registry ? ` from ${lock.registry}` : ""}`,
            },
          ],
          how: `uv.lock holds torch ${lock.version}${lock.registry ? ` from ${lock.registry}` : ""}`,
          unknown: null,
        };
        out.push(
          prediction(
            ctx,
            { command: "uv sync", tool: "uv", manifest, exact: true },
            requirement,
            lockRoute,
            line,
          ),
        );
      } else if (uv)
        out.push(
          prediction(
            ctx,
            { command: "uv sync", tool: "uv", manifest, exact: true },
            requirement,
            route,
            line,
          ),
        );
      else
        out.push(
          prediction(
            ctx,
            { command: "pip install .", tool: "pip", manifest, exact: false },
            requirement,
            route,
            line,
          ),
        );
    }
  }
  for (const file of project.requirementsFiles) {
    const requirement = file.requirements.find((r) => r.normalizedName === "torch" && applies(ctx, r));
    if (!requirement) continue;
    const name = shortPath(ctx, file.path);
    const pytorchExtra = file.extraIndexUrls.find((url) => pytorchIndexVariant(url) !== null);
    // --index-url replaces PyPI; a PyTorch --extra-index-url wins for torch because its local versions (2.5.1+cu124) sort above PyPI's 2.5.1.
    const [indexUrl, flag] = file.indexUrls[0]
      ? [file.indexUrls[0], "--index-url"]
      : pytorchExtra
        ? [pytorchExtra, "--extra-index-url"]
        : [null, ""];
    const route = routeFor(
      requirement,
      indexUrl,
      indexUrl ? { origin: name, text: `${flag} ${indexUrl}` } : null,
    );
    out.push(
      prediction(
        ctx,
        { command: `pip install -r ${name}`, tool: "pip", manifest: name, exact: false },
        requirement,
        route,
        { origin: requirement.origin, text: requirement.raw },
      ),
    );
  }
  return out;
}

export { applies as requirementApplies, shortPath };
