/**
 * Which torch a pixi workspace (per environment) or a conda environment.yml would install here:
 * the channel that serves `pytorch` (an explicit `channel::`, else the first channel that carries
 * it, as strict channel priority does), the release the version spec picks, and the CPU or CUDA
 * build the solver takes. Sources for the solver behaviour:
 * - conda-forge CUDA builds have a build number 200 higher, so the solver prefers them wherever
 *   `__cuda` is present (conda-forge/pytorch-cpu-feedstock recipe/meta.yaml);
 * - pixi solves with `__cuda` only when [system-requirements] cuda is set, and installs the
 *   CPU-only build without it (prefix-dev/pixi@46e1ed75 docs/python/pytorch.md);
 * - conda reads `__cuda` from the host's driver; a CUDA build's cuda-version asks `__cuda` for its
 *   major only (conda-forge/cuda-version-feedstock@ae97761f recipe/meta.yaml);
 * - the pytorch channel stopped at 2.5 and has no linux-aarch64 CUDA builds (pytorch#138506;
 *   pytorch/builder conda/pytorch-cuda/conda_build_config.yaml).
 * PyPI torch in these manifests (pixi [pypi-dependencies], environment.yml pip:) goes through the
 * same wheel logic as requirements files.
 */
import type { CondaDependency, CondaManifest, CondaPypiDependency } from "../facts/schema.js";
import type { CondaTorchBuildRow } from "../kb/types.js";
import { buildVariant, condaVersionMatches } from "../util/conda-version.js";
import { compareVersions, versionParts } from "../util/version.js";
import { evaluateMarker } from "../util/pep508-marker.js";
import type { InstallPrediction, ManifestLine, PredictedBuild, PredictionContext } from "./types.js";
import { resolveWheel, wheelRoute } from "./predict-wheel.js";
import { condaPypiRoute, shortPath } from "./routes.js";

const TORCH_PACKAGES = ["pytorch", "pytorch-gpu", "pytorch-cpu"];
/** Channels that serve their own pytorch builds gpuprep has no rows for (Anaconda's). */
const UNKNOWN_TORCH_CHANNELS = new Set(["defaults", "anaconda", "main", "pkgs/main"]);

function pixiPlatform(platform: PredictionContext["platform"]): string {
  return platform === "linux-x86_64" ? "linux-64" : "linux-aarch64";
}

function line(dep: { origin: string; raw: string }): ManifestLine {
  return { origin: dep.origin, text: dep.raw };
}

interface CondaInputs {
  manifest: CondaManifest;
  torch: CondaDependency | null;
  pypiTorch: CondaPypiDependency | null;
  /** pytorch-gpu, pytorch-cpu, cuda-version, pytorch-cuda, cpuonly when present. */
  selectors: Map<string, CondaDependency>;
  /** The `__cuda` the solve sees ("12.0"), or null when there is none. */
  cuda: { value: string; origin: string } | null;
  command: string;
  tool: "pixi" | "conda";
}

/** The newest version the spec accepts, among a channel's rows; with the rows that carry it. */
function pickRelease(
  rows: CondaTorchBuildRow[],
  spec: string,
): { version: string; rows: CondaTorchBuildRow[] } | null {
  const versions = new Map<string, CondaTorchBuildRow[]>();
  for (const row of rows) {
    const list =
      row.versions.length > 0 ? row.versions : Array.from({ length: 31 }, (_, p) => `${row.torch}.${p}`);
    for (const version of list) {
      if (!condaVersionMatches(version, spec)) continue;
      // Rows without a version list stand for their series: key them by series.
      const key = row.versions.length > 0 ? version : row.torch;
      versions.set(key, [...(versions.get(key) ?? []), row]);
      if (row.versions.length === 0) break;
    }
  }
  const best = [...versions.keys()].sort(compareVersions).pop();
  return best ? { version: best, rows: versions.get(best)! } : null;
}

function channelLabel(channel: string): string {
  return channel === "pytorch" ? "pytorch-channel" : channel;
}

function cpuBuild(channel: string, version: string, platform: string, sources: string[]): PredictedBuild {
  return {
    label: `${channelLabel(channel)} pytorch ${version} CPU-only build (${platform})`,
    torch: version.split(".").slice(0, 2).join("."),
    cuda: null,
    archList: [],
    sources,
  };
}

function condaBuild(row: CondaTorchBuildRow, version: string): PredictedBuild {
  return {
    label: `${channelLabel(row.channel)} pytorch ${version} CUDA ${row.cuda} build (${row.platform})`,
    torch: row.torch,
    cuda: row.cuda,
    archList: row.archList,
    sources: row.sources.map((s) => s.url),
  };
}

function majorOf(version: string): number {
  return versionParts(version)[0] ?? 0;
}

interface CondaOutcome {
  builds: PredictedBuild[];
  unknown: string | null;
  how: string;
  channel: string | null;
  lines: ManifestLine[];
}

function resolveConda(ctx: PredictionContext, inputs: CondaInputs, torch: CondaDependency): CondaOutcome {
  const { manifest, selectors, cuda } = inputs;
  const file = shortPath(ctx.projectDir, manifest.path);
  const lines: ManifestLine[] = [line(torch)];
  const fail = (unknown: string, channel: string | null = null): CondaOutcome => ({
    builds: [],
    unknown,
    how: "",
    channel,
    lines,
  });
  let channel = torch.channel;
  if (!channel) {
    for (const name of manifest.channels) {
      if (name === "conda-forge" || name === "pytorch" || UNKNOWN_TORCH_CHANNELS.has(name)) {
        channel = name;
        break;
      }
    }
    if (manifest.lines["channels"])
      lines.push({
        origin: `${file}:${manifest.lines["channels"]}`,
        text: `channels: ${manifest.channels.join(", ")}`,
      });
  }
  if (!channel)
    return fail(
      `none of the channels (${manifest.channels.join(", ") || "none"}) is one gpuprep knows to serve pytorch`,
    );
  if (channel !== "conda-forge" && channel !== "pytorch")
    return fail(
      `pytorch comes from the ${channel} channel, whose builds are not in the knowledge base`,
      channel,
    );
  for (const name of ["pytorch-gpu", "pytorch-cpu", "cuda-version", "pytorch-cuda", "cpuonly"]) {
    const selector = selectors.get(name);
    if (selector && selector !== torch) lines.push(line(selector));
  }
  const rows = ctx.kb.condaTorchBuilds(channel, ctx.platform);
  if (channel === "pytorch" && ctx.platform === "linux-aarch64")
    return fail(
      selectors.has("pytorch-cuda")
        ? "the pytorch channel publishes pytorch-cuda for linux-64 and win-64 only: this environment cannot be solved on linux-aarch64"
        : "the pytorch channel has no CUDA builds for linux-aarch64; its CPU builds there are not in the knowledge base",
      channel,
    );
  const release = pickRelease(
    channel === "pytorch" ? ctx.kb.condaTorchBuilds(channel, ctx.platform) : rows,
    torch.version,
  );
  if (!release) {
    const known = [...new Set(rows.map((r) => r.torch))].sort(compareVersions);
    return fail(
      `${channel} pytorch "${torch.version || "any"}" is not among the releases the knowledge base has for ${ctx.platform} (${known[0] ?? "-"} to ${known[known.length - 1] ?? "-"})`,
      channel,
    );
  }
  const version = release.version;
  const sourceOf = release.rows[0]?.sources.map((s) => s.url) ?? [];
  const buildHint = buildVariant(torch.build);
  if (channel === "pytorch") {
    if (selectors.has("cpuonly") || buildHint?.kind === "cpu")
      return {
        builds: [cpuBuild(channel, version, ctx.platform, sourceOf)],
        unknown: null,
        how: "cpuonly selects the pytorch channel's CPU build",
        channel,
        lines,
      };
    const pytorchCuda = selectors.get("pytorch-cuda");
    const wanted = pytorchCuda?.version ?? (buildHint?.kind === "cuda" ? (buildHint.cuda ?? "") : null);
    if (wanted === null)
      return fail(
        "without pytorch-cuda (or cpuonly) the pytorch channel's choice between its CPU and CUDA builds is not known",
        channel,
      );
    const matching = release.rows.filter((row) => row.cuda && condaVersionMatches(row.cuda, wanted));
    if (matching.length === 0)
      return fail(
        `the pytorch channel's torch ${version} has no CUDA ${wanted} build in the knowledge base`,
        channel,
      );
    return {
      builds: matching.map((row) => condaBuild(row, version)),
      unknown: null,
      how: `pytorch-cuda ${wanted} selects the pytorch channel's CUDA build of torch ${version}`,
      channel,
      lines,
    };
  }
  // conda-forge
  const wantsCpu = torch.name === "pytorch-cpu" || selectors.has("pytorch-cpu") || buildHint?.kind === "cpu";
  const wantsGpu = torch.name === "pytorch-gpu" || selectors.has("pytorch-gpu") || buildHint?.kind === "cuda";
  const cpu = () => ({
    builds: [cpuBuild(channel, version, ctx.platform, sourceOf)],
    unknown: null,
    channel,
    lines,
  });
  if (wantsCpu) return { ...cpu(), how: "the manifest asks for conda-forge's CPU build" };
  if (!cuda) {
    if (inputs.tool === "pixi") {
      if (wantsGpu)
        return fail(
          "pytorch-gpu needs the __cuda virtual package, and without [system-requirements] cuda pixi solves without it: pixi install fails",
          channel,
        );
      return {
        ...cpu(),
        how: "no [system-requirements] cuda: pixi solves without __cuda and installs conda-forge's CPU-only build",
      };
    }
    return {
      ...cpu(),
      how: "conda finds no __cuda (no NVIDIA driver) and installs conda-forge's CPU-only build",
    };
  }
  lines.push({ origin: cuda.origin, text: `__cuda = ${cuda.value}` });
  const cudaVersion = selectors.get("cuda-version");
  const candidates = release.rows.filter(
    (row) =>
      row.cuda !== null &&
      majorOf(row.cuda) <= majorOf(cuda.value) &&
      (buildHint?.kind !== "cuda" ||
        !buildHint.cuda ||
        condaVersionMatches(
          row.cuda,
          buildHint.cuda.includes(".") ? buildHint.cuda : `${buildHint.cuda}.*`,
        )) &&
      (!cudaVersion || condaVersionMatches(row.cuda, cudaVersion.version)),
  );
  // The solver prefers the highest build number: a superseded variant only when no current one fits.
  const current = candidates.filter((row) => !row.superseded);
  if (current.length > 0) candidates.splice(0, candidates.length, ...current);
  if (candidates.length === 0)
    return fail(
      `no conda-forge CUDA build of pytorch ${version} for ${ctx.platform} fits __cuda ${cuda.value}${cudaVersion ? ` and cuda-version ${cudaVersion.version}` : ""} in the knowledge base`,
      channel,
    );
  return {
    builds: candidates.map((row) => condaBuild(row, version)),
    unknown: null,
    how:
      `__cuda ${cuda.value} is present, so the solver takes conda-forge's CUDA build of pytorch ${version}` +
      (candidates.length > 1
        ? ` (one of CUDA ${candidates.map((r) => r.cuda).join(", ")}: the solve decides)`
        : ""),
    channel,
    lines,
  };
}

function pypiRoute(manifest: CondaManifest, dep: CondaPypiDependency, file: string) {
  return wheelRoute(dep, condaPypiRoute(manifest, dep, file));
}

function predictOne(ctx: PredictionContext, inputs: CondaInputs): InstallPrediction | null {
  const file = shortPath(ctx.projectDir, inputs.manifest.path);
  const base = {
    command: inputs.command,
    tool: inputs.tool,
    manifest: file,
    systemCuda: inputs.tool === "pixi" ? inputs.cuda : null,
  } as const;
  if (inputs.torch) {
    const outcome = resolveConda(ctx, inputs, inputs.torch);
    return {
      ...base,
      lines: outcome.lines,
      how: outcome.how,
      builds: outcome.builds,
      unknown: outcome.unknown,
      specifier: inputs.torch.version,
      exactVersion: null,
      variant: null,
      fromPypi: false,
      exact: false,
      ecosystem: "conda",
      channel: outcome.channel,
      condaTorchLine: line(inputs.torch),
    };
  }
  const dep = inputs.pypiTorch;
  if (!dep) return null;
  const route = pypiRoute(inputs.manifest, dep, file);
  const outcome = route.unknown
    ? { build: null, unknown: route.unknown }
    : resolveWheel(ctx, route.exactVersion ? "" : dep.specifier, route.exactVersion, route.variant);
  return {
    ...base,
    lines: [line(dep), ...route.lines],
    how: route.how,
    builds: outcome.build ? [outcome.build] : [],
    unknown: outcome.unknown,
    specifier: dep.specifier,
    exactVersion: route.exactVersion,
    variant: route.variant,
    fromPypi: route.variant === null && !route.unknown,
    exact: false,
    ecosystem: "pypi",
    channel: null,
    condaTorchLine: null,
  };
}

function lastOf<T extends { name: string }>(items: T[], names: string[]): T | null {
  return [...items].reverse().find((item) => names.includes(item.name)) ?? null;
}

function pixiPredictions(ctx: PredictionContext, manifest: CondaManifest): InstallPrediction[] {
  const platform = pixiPlatform(ctx.platform);
  const file = shortPath(ctx.projectDir, manifest.path);
  const envNames = ["default", ...Object.keys(manifest.environments).filter((e) => e !== "default")];
  const out: InstallPrediction[] = [];
  const seen = new Set<string>();
  for (const env of envNames) {
    const features = ["default", ...(manifest.environments[env] ?? [])];
    const inEnv = <T extends { feature: string | null; platform: string | null }>(items: T[]) =>
      features.flatMap((f) =>
        items.filter((d) => d.feature === f && (d.platform === null || d.platform === platform)),
      );
    const deps = inEnv(manifest.dependencies);
    const pypi = inEnv(manifest.pypiDependencies).filter(
      (d) =>
        d.normalizedName === "torch" &&
        (d.marker === null || evaluateMarker(d.marker, ctx.markers) !== false),
    );
    const torch = lastOf(deps, ["pytorch"]) ?? lastOf(deps, TORCH_PACKAGES);
    const pypiTorch = pypi[pypi.length - 1] ?? null;
    if (!torch && !pypiTorch) continue;
    const selectors = new Map<string, CondaDependency>();
    for (const name of ["pytorch-gpu", "pytorch-cpu", "cuda-version", "pytorch-cuda", "cpuonly"]) {
      const dep = lastOf(deps, [name]);
      if (dep) selectors.set(name, dep);
    }
    const cudaFeature = [...features].reverse().find((f) => manifest.systemCuda[f] !== undefined);
    const cudaLine = manifest.lines["system-requirements.cuda"] ?? manifest.lines["system-requirements"];
    const cuda = cudaFeature
      ? {
          value: manifest.systemCuda[cudaFeature]!,
          origin:
            cudaFeature === "default" && cudaLine
              ? `${file}:${cudaLine}`
              : `${file}:feature.${cudaFeature}.system-requirements`,
        }
      : null;
    const key = JSON.stringify([
      torch?.origin,
      pypiTorch?.origin,
      [...selectors.values()].map((s) => s.origin),
      cuda,
    ]);
    if (seen.has(key)) continue;
    seen.add(key);
    const command = env === "default" ? "pixi install" : `pixi install -e ${env}`;
    if (manifest.platforms.length > 0 && !manifest.platforms.includes(platform)) {
      out.push({
        command,
        tool: "pixi",
        manifest: file,
        lines: [
          {
            origin: manifest.lines["platforms"] ? `${file}:${manifest.lines["platforms"]}` : file,
            text: `platforms = ${JSON.stringify(manifest.platforms)}`,
          },
        ],
        how: "",
        builds: [],
        unknown: `${file} does not list ${platform} in its platforms: pixi refuses to install on this machine`,
        specifier: "",
        exactVersion: null,
        variant: null,
        fromPypi: false,
        exact: false,
        ecosystem: torch ? "conda" : "pypi",
        channel: null,
        condaTorchLine: torch ? line(torch) : null,
        systemCuda: cuda,
      });
      continue;
    }
    const prediction = predictOne(ctx, {
      manifest,
      torch,
      pypiTorch,
      selectors,
      cuda,
      command,
      tool: "pixi",
    });
    if (prediction) out.push(prediction);
  }
  return out;
}

function condaEnvPrediction(ctx: PredictionContext, manifest: CondaManifest): InstallPrediction | null {
  const deps = manifest.dependencies;
  const torch = lastOf(deps, ["pytorch"]) ?? lastOf(deps, TORCH_PACKAGES);
  const pypiTorch =
    manifest.pypiDependencies.find(
      (d) =>
        d.normalizedName === "torch" &&
        (d.marker === null || evaluateMarker(d.marker, ctx.markers) !== false),
    ) ?? null;
  const selectors = new Map<string, CondaDependency>();
  for (const name of ["pytorch-gpu", "pytorch-cpu", "cuda-version", "pytorch-cuda", "cpuonly"]) {
    const dep = lastOf(deps, [name]);
    if (dep) selectors.set(name, dep);
  }
  const nvidia = ctx.facts.host.nvidia;
  const cuda =
    nvidia.status === "ok" && nvidia.cudaVersion
      ? { value: nvidia.cudaVersion, origin: "nvidia-smi (CUDA Version)" }
      : null;
  const file = shortPath(ctx.projectDir, manifest.path);
  return predictOne(ctx, {
    manifest,
    torch,
    pypiTorch,
    selectors,
    cuda,
    command: `conda env create -f ${file}`,
    tool: "conda",
  });
}

export function predictCondaManifests(ctx: PredictionContext): InstallPrediction[] {
  const out: InstallPrediction[] = [];
  for (const manifest of ctx.facts.project?.condaManifests ?? []) {
    if (manifest.kind === "pixi") out.push(...pixiPredictions(ctx, manifest));
    else {
      const prediction = condaEnvPrediction(ctx, manifest);
      if (prediction) out.push(prediction);
    }
  }
  return out;
}
