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
/** Packages whose presence picks between the CPU and CUDA builds. */
const SELECTOR_NAMES = ["pytorch-gpu", "pytorch-cpu", "cuda-version", "pytorch-cuda", "cpuonly"];

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

function failed(lines: ManifestLine[], unknown: string, channel: string | null = null): CondaOutcome {
  return { builds: [], unknown, how: "", channel, lines };
}

function solved(lines: ManifestLine[], channel: string, builds: PredictedBuild[], how: string): CondaOutcome {
  return { builds, unknown: null, how, channel, lines };
}

/**
 * The first of the manifest's channels that serves pytorch, as strict channel priority picks it;
 * adds the channels line to `lines` where the manifest has one.
 */
function firstTorchChannel(manifest: CondaManifest, file: string, lines: ManifestLine[]): string | null {
  const channel =
    manifest.channels.find(
      (name) => name === "conda-forge" || name === "pytorch" || UNKNOWN_TORCH_CHANNELS.has(name),
    ) ?? null;
  if (manifest.lines["channels"])
    lines.push({
      origin: `${file}:${manifest.lines["channels"]}`,
      text: `channels: ${manifest.channels.join(", ")}`,
    });
  return channel;
}

/** The selector lines beside the torch line (a selector may be the torch line itself: pytorch-gpu). */
function selectorLines(selectors: CondaInputs["selectors"], torch: CondaDependency): ManifestLine[] {
  return SELECTOR_NAMES.map((name) => selectors.get(name))
    .filter((selector) => selector !== undefined && selector !== torch)
    .map((selector) => line(selector!));
}

/** A torch release chosen on a channel gpuprep has rows for, and what the choice between its builds reads. */
interface ChosenRelease {
  ctx: PredictionContext;
  inputs: CondaInputs;
  torch: CondaDependency;
  channel: "conda-forge" | "pytorch";
  version: string;
  rows: CondaTorchBuildRow[];
  buildHint: ReturnType<typeof buildVariant>;
  lines: ManifestLine[];
}

function resolveConda(ctx: PredictionContext, inputs: CondaInputs, torch: CondaDependency): CondaOutcome {
  const { manifest, selectors } = inputs;
  const lines: ManifestLine[] = [line(torch)];
  const channel =
    torch.channel || firstTorchChannel(manifest, shortPath(ctx.projectDir, manifest.path), lines);
  if (!channel)
    return failed(
      lines,
      `none of the channels (${manifest.channels.join(", ") || "none"}) is one gpuprep knows to serve pytorch`,
    );
  if (channel !== "conda-forge" && channel !== "pytorch")
    return failed(
      lines,
      `pytorch comes from the ${channel} channel, whose builds are not in the knowledge base`,
      channel,
    );
  lines.push(...selectorLines(selectors, torch));
  if (channel === "pytorch" && ctx.platform === "linux-aarch64")
    return failed(
      lines,
      selectors.has("pytorch-cuda")
        ? "the pytorch channel publishes pytorch-cuda for linux-64 and win-64 only: this environment cannot be solved on linux-aarch64"
        : "the pytorch channel has no CUDA builds for linux-aarch64; its CPU builds there are not in the knowledge base",
      channel,
    );
  const rows = ctx.kb.condaTorchBuilds(channel, ctx.platform);
  const release = pickRelease(rows, torch.version);
  if (!release) {
    const known = [...new Set(rows.map((r) => r.torch))].sort(compareVersions);
    return failed(
      lines,
      `${channel} pytorch "${torch.version || "any"}" is not among the releases the knowledge base has for ${ctx.platform} (${known[0] ?? "-"} to ${known[known.length - 1] ?? "-"})`,
      channel,
    );
  }
  const chosen: ChosenRelease = {
    ctx,
    inputs,
    torch,
    channel,
    ...release,
    buildHint: buildVariant(torch.build),
    lines,
  };
  return channel === "pytorch" ? pytorchChannelBuild(chosen) : condaForgeBuild(chosen);
}

/** The CPU build of the chosen release, cited with the sources of its first row. */
function cpuBuildOf(chosen: ChosenRelease): PredictedBuild {
  const sources = chosen.rows[0]?.sources.map((s) => s.url) ?? [];
  return cpuBuild(chosen.channel, chosen.version, chosen.ctx.platform, sources);
}

/** The pytorch channel: cpuonly selects its CPU build, pytorch-cuda (or a cudaX.Y build string) a CUDA one. */
function pytorchChannelBuild(chosen: ChosenRelease): CondaOutcome {
  const { inputs, channel, version, buildHint, lines } = chosen;
  if (inputs.selectors.has("cpuonly") || buildHint?.kind === "cpu")
    return solved(lines, channel, [cpuBuildOf(chosen)], "cpuonly selects the pytorch channel's CPU build");
  const pytorchCuda = inputs.selectors.get("pytorch-cuda");
  const wanted = pytorchCuda?.version ?? (buildHint?.kind === "cuda" ? (buildHint.cuda ?? "") : null);
  if (wanted === null)
    return failed(
      lines,
      "without pytorch-cuda (or cpuonly) the pytorch channel's choice between its CPU and CUDA builds is not known",
      channel,
    );
  const matching = chosen.rows.filter((row) => row.cuda && condaVersionMatches(row.cuda, wanted));
  if (matching.length === 0)
    return failed(
      lines,
      `the pytorch channel's torch ${version} has no CUDA ${wanted} build in the knowledge base`,
      channel,
    );
  return solved(
    lines,
    channel,
    matching.map((row) => condaBuild(row, version)),
    `pytorch-cuda ${wanted} selects the pytorch channel's CUDA build of torch ${version}`,
  );
}

/** conda-forge: the CPU build where asked for or where the solve sees no __cuda, else the CUDA builds that fit. */
function condaForgeBuild(chosen: ChosenRelease): CondaOutcome {
  const { torch, inputs, channel, version, buildHint, lines } = chosen;
  const { selectors, cuda } = inputs;
  const wantsCpu = torch.name === "pytorch-cpu" || selectors.has("pytorch-cpu") || buildHint?.kind === "cpu";
  const wantsGpu = torch.name === "pytorch-gpu" || selectors.has("pytorch-gpu") || buildHint?.kind === "cuda";
  if (wantsCpu)
    return solved(lines, channel, [cpuBuildOf(chosen)], "the manifest asks for conda-forge's CPU build");
  if (!cuda) return condaForgeWithoutCuda(chosen, wantsGpu);
  lines.push({ origin: cuda.origin, text: `__cuda = ${cuda.value}` });
  const cudaVersion = selectors.get("cuda-version");
  const candidates = preferCurrent(
    chosen.rows.filter((row) => fitsCuda(row, cuda.value, buildHint, cudaVersion)),
  );
  if (candidates.length === 0)
    return failed(
      lines,
      `no conda-forge CUDA build of pytorch ${version} for ${chosen.ctx.platform} fits __cuda ${cuda.value}${cudaVersion ? ` and cuda-version ${cudaVersion.version}` : ""} in the knowledge base`,
      channel,
    );
  return solved(
    lines,
    channel,
    candidates.map((row) => condaBuild(row, version)),
    `__cuda ${cuda.value} is present, so the solver takes conda-forge's CUDA build of pytorch ${version}` +
      (candidates.length > 1
        ? ` (one of CUDA ${candidates.map((r) => r.cuda).join(", ")}: the solve decides)`
        : ""),
  );
}

function condaForgeWithoutCuda(chosen: ChosenRelease, wantsGpu: boolean): CondaOutcome {
  const { channel, lines } = chosen;
  if (chosen.inputs.tool !== "pixi")
    return solved(
      lines,
      channel,
      [cpuBuildOf(chosen)],
      "conda finds no __cuda (no NVIDIA driver) and installs conda-forge's CPU-only build",
    );
  if (wantsGpu)
    return failed(
      lines,
      "pytorch-gpu needs the __cuda virtual package, and without [system-requirements] cuda pixi solves without it: pixi install fails",
      channel,
    );
  return solved(
    lines,
    channel,
    [cpuBuildOf(chosen)],
    "no [system-requirements] cuda: pixi solves without __cuda and installs conda-forge's CPU-only build",
  );
}

/**
 * A conda-forge CUDA build the solve can take: its CUDA major within __cuda's, and matching the
 * build string's CUDA and the cuda-version pin where the manifest has them.
 */
function fitsCuda(
  row: CondaTorchBuildRow,
  systemCuda: string,
  buildHint: ReturnType<typeof buildVariant>,
  cudaVersion: CondaDependency | undefined,
): boolean {
  if (row.cuda === null || majorOf(row.cuda) > majorOf(systemCuda)) return false;
  if (buildHint?.kind === "cuda" && buildHint.cuda) {
    const spec = buildHint.cuda.includes(".") ? buildHint.cuda : `${buildHint.cuda}.*`;
    if (!condaVersionMatches(row.cuda, spec)) return false;
  }
  return !cudaVersion || condaVersionMatches(row.cuda, cudaVersion.version);
}

/** The solver prefers the highest build number: a superseded variant only when no current one fits. */
function preferCurrent(candidates: CondaTorchBuildRow[]): CondaTorchBuildRow[] {
  const current = candidates.filter((row) => !row.superseded);
  return current.length > 0 ? current : candidates;
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

/** The conda torch line: the last `pytorch`, else the last of its gpu/cpu variants. */
function condaTorchOf(deps: CondaDependency[]): CondaDependency | null {
  return lastOf(deps, ["pytorch"]) ?? lastOf(deps, TORCH_PACKAGES);
}

/** A PyPI torch line whose marker does not rule it out here. */
function isPypiTorchHere(dep: CondaPypiDependency, ctx: PredictionContext): boolean {
  return (
    dep.normalizedName === "torch" &&
    (dep.marker === null || evaluateMarker(dep.marker, ctx.markers) !== false)
  );
}

/** The last line of each selector package. */
function torchSelectors(deps: CondaDependency[]): Map<string, CondaDependency> {
  const selectors = new Map<string, CondaDependency>();
  for (const name of SELECTOR_NAMES) {
    const dep = lastOf(deps, [name]);
    if (dep) selectors.set(name, dep);
  }
  return selectors;
}

/** The `__cuda` a pixi environment solves with: the [system-requirements] cuda of its last feature that sets one. */
function pixiSystemCuda(manifest: CondaManifest, features: string[], file: string): CondaInputs["cuda"] {
  const cudaFeature = [...features].reverse().find((f) => manifest.systemCuda[f] !== undefined);
  if (!cudaFeature) return null;
  const cudaLine = manifest.lines["system-requirements.cuda"] ?? manifest.lines["system-requirements"];
  return {
    value: manifest.systemCuda[cudaFeature]!,
    origin:
      cudaFeature === "default" && cudaLine
        ? `${file}:${cudaLine}`
        : `${file}:feature.${cudaFeature}.system-requirements`,
  };
}

/** What one pixi environment holds of torch (its features' lines for this platform), null where it holds none. */
function pixiEnvironmentInputs(
  ctx: PredictionContext,
  manifest: CondaManifest,
  env: string,
): Omit<CondaInputs, "manifest" | "command" | "tool"> | null {
  const platform = pixiPlatform(ctx.platform);
  const features = ["default", ...(manifest.environments[env] ?? [])];
  const inEnv = <T extends { feature: string | null; platform: string | null }>(items: T[]) =>
    features.flatMap((f) =>
      items.filter((d) => d.feature === f && (d.platform === null || d.platform === platform)),
    );
  const deps = inEnv(manifest.dependencies);
  const pypi = inEnv(manifest.pypiDependencies).filter((d) => isPypiTorchHere(d, ctx));
  const torch = condaTorchOf(deps);
  const pypiTorch = pypi[pypi.length - 1] ?? null;
  if (!torch && !pypiTorch) return null;
  const cuda = pixiSystemCuda(manifest, features, shortPath(ctx.projectDir, manifest.path));
  return { torch, pypiTorch, selectors: torchSelectors(deps), cuda };
}

/** pixi refuses to install on a platform the workspace does not list. */
function pixiPlatformRefusal(
  ctx: PredictionContext,
  manifest: CondaManifest,
  command: string,
  inputs: Pick<CondaInputs, "torch" | "cuda">,
): InstallPrediction {
  const file = shortPath(ctx.projectDir, manifest.path);
  return {
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
    unknown: `${file} does not list ${pixiPlatform(ctx.platform)} in its platforms: pixi refuses to install on this machine`,
    specifier: "",
    exactVersion: null,
    variant: null,
    fromPypi: false,
    exact: false,
    ecosystem: inputs.torch ? "conda" : "pypi",
    channel: null,
    condaTorchLine: inputs.torch ? line(inputs.torch) : null,
    systemCuda: inputs.cuda,
  };
}

/** One prediction per pixi environment, the default first; environments that resolve the same lines are told once. */
function pixiPredictions(ctx: PredictionContext, manifest: CondaManifest): InstallPrediction[] {
  const platform = pixiPlatform(ctx.platform);
  const envNames = ["default", ...Object.keys(manifest.environments).filter((e) => e !== "default")];
  const out: InstallPrediction[] = [];
  const seen = new Set<string>();
  for (const env of envNames) {
    const inputs = pixiEnvironmentInputs(ctx, manifest, env);
    if (!inputs) continue;
    const key = JSON.stringify([
      inputs.torch?.origin,
      inputs.pypiTorch?.origin,
      [...inputs.selectors.values()].map((s) => s.origin),
      inputs.cuda,
    ]);
    if (seen.has(key)) continue;
    seen.add(key);
    const command = env === "default" ? "pixi install" : `pixi install -e ${env}`;
    if (manifest.platforms.length > 0 && !manifest.platforms.includes(platform)) {
      out.push(pixiPlatformRefusal(ctx, manifest, command, inputs));
      continue;
    }
    const prediction = predictOne(ctx, { manifest, ...inputs, command, tool: "pixi" });
    if (prediction) out.push(prediction);
  }
  return out;
}

function condaEnvPrediction(ctx: PredictionContext, manifest: CondaManifest): InstallPrediction | null {
  const deps = manifest.dependencies;
  const nvidia = ctx.facts.host.nvidia;
  const cuda =
    nvidia.status === "ok" && nvidia.cudaVersion
      ? { value: nvidia.cudaVersion, origin: "nvidia-smi (CUDA Version)" }
      : null;
  const file = shortPath(ctx.projectDir, manifest.path);
  return predictOne(ctx, {
    manifest,
    torch: condaTorchOf(deps),
    pypiTorch: manifest.pypiDependencies.find((d) => isPypiTorchHere(d, ctx)) ?? null,
    selectors: torchSelectors(deps),
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
