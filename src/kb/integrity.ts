/**
 * Cross-table contradictions the schemas cannot see: a torch build claiming an arch its CUDA
 * cannot compile, a toolkit whose GA driver is below its own minor-compatibility floor, two PyPI
 * defaults for one release, a GPU of an unknown capability or whose nvidia-smi memory does not fit
 * its marketed size. Returns one line per problem.
 */
import { compareDriverVersions } from "../vocabulary/driver-version.js";
import { rowDriver } from "./driver.js";
import { existsSync } from "node:fs";
import { coverageFor, parseCodeTarget } from "./compat.js";
import { rowCapability } from "./capability.js";
import { currentBuilds } from "./queries/extensions.js";
import { ngcContradictions } from "./integrity-ngc.js";
import { gpuContradictions } from "./integrity-gpus.js";
import type { KnowledgeBaseData } from "./load.js";
import type {
  CondaTorchBuildRow,
  CudaToolkitRow,
  ExtensionBuild,
  ExtensionRow,
  GpuRow,
  TorchBuildRow,
} from "./types.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { normalizeName } from "../util/package-name.js";
import { satisfies } from "../util/pep440.js";

/** What every check may look at: the tables, the toolkits by version, the repository (for local sources). */
interface Context {
  data: KnowledgeBaseData;
  toolkits: Map<string, CudaToolkitRow>;
  repoRoot: string | undefined;
}

type Check = (context: Context) => string[];

/** One check per kind of contradiction, in the order their lines are reported. */
const CHECKS: Check[] = [
  ({ data }) => toolkitsBelowOwnFloor(data),
  ({ data }) => toolkitDriversOutOfOrder(data),
  torchBuildProblems,
  condaBuildProblems,
  ({ data }) => data.gpus.flatMap((gpu) => gpuRowProblems(gpu, data)),
  ({ data }) => ngcContradictions(data),
  ({ data }) => gpuContradictions(data),
  ({ data }) => packageRequirementProblems(data),
  ({ data }) => extensionsWithoutImportCheck(data),
  ({ data, toolkits }) => data.extensions.flatMap((ext) => extensionProblems(ext, toolkits)),
  systemProblems,
  ({ data }) => wheelPythonDuplicates(data),
  missingLocalSources,
];

export function findContradictions(data: KnowledgeBaseData, repoRoot?: string): string[] {
  const toolkits = new Map(data.cudaToolkits.map((row) => [row.version, row]));
  return CHECKS.flatMap((check) => check({ data, toolkits, repoRoot }));
}

/** The toolkit of a row's CUDA version, or undefined for a CPU row or a version the table lacks. */
function toolkitOf(
  toolkits: Context["toolkits"],
  cuda: string | null | undefined,
): CudaToolkitRow | undefined {
  return cuda ? toolkits.get(cuda) : undefined;
}

/** The SASS arch ("90") of an arch-list entry, "" where the entry cannot be read. */
function smOf(entry: string): string {
  const target = parseCodeTarget(entry);
  return target ? `${target.major}${target.minor}` : "";
}

/** The entries of an arch list that `toolkit` cannot compile; none where its targets are not known. */
function uncompilable(entries: string[], toolkit: CudaToolkitRow | undefined): string[] {
  const targets = toolkit?.sassTargets;
  return targets ? entries.filter((entry) => !targets.includes(smOf(entry))) : [];
}

function toolkitsBelowOwnFloor(data: KnowledgeBaseData): string[] {
  return data.cudaToolkits
    .filter(
      (row) =>
        row.minorCompatMinDriverLinux &&
        compareDriverVersions(rowDriver(row.minDriverLinux), rowDriver(row.minorCompatMinDriverLinux)) < 0,
    )
    .map(
      (row) =>
        `CUDA ${row.version}: GA driver ${row.minDriverLinux} is below its minor-compat floor ${row.minorCompatMinDriverLinux}`,
    );
}

/** A newer toolkit never needs an older driver than the one before it. */
function toolkitDriversOutOfOrder(data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  const byVersion = [...data.cudaToolkits].sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < byVersion.length; i++) {
    const previous = byVersion[i - 1]!;
    const current = byVersion[i]!;
    if (compareDriverVersions(rowDriver(current.minDriverLinux), rowDriver(previous.minDriverLinux)) < 0)
      problems.push(
        `CUDA ${current.version} needs an older driver (${current.minDriverLinux}) than CUDA ${previous.version} (${previous.minDriverLinux})`,
      );
  }
  return problems;
}

function claimsUnverifiedPtx(build: { ptxUnverified?: boolean; archList: string[] }): boolean {
  return Boolean(build.ptxUnverified) && build.archList.some((entry) => entry.startsWith("compute_"));
}

/** Per build, in the tables' order; `defaults` remembers each release's PyPI default seen so far. */
function torchBuildProblems({ data, toolkits }: Context): string[] {
  const defaults = new Map<string, string>();
  return data.torchBuilds.flatMap((build) => torchBuildRowProblems(build, toolkits, defaults));
}

function torchBuildRowProblems(
  build: TorchBuildRow,
  toolkits: Context["toolkits"],
  defaults: Map<string, string>,
): string[] {
  const problems: string[] = [];
  const name = `torch ${build.torch} ${build.variant} ${build.platform}`;
  if (build.cuda && `cu${build.cuda.replace(".", "")}` !== build.variant)
    problems.push(`${name}: variant does not match CUDA ${build.cuda}`);
  const toolkit = toolkitOf(toolkits, build.cuda);
  if (build.cuda && !toolkit) problems.push(`${name}: CUDA ${build.cuda} is not in the toolkit table`);
  // Entries that are no code target are passed over here; the conda and extension checks count them as not compilable.
  const readable = build.archList.filter((entry) => parseCodeTarget(entry));
  for (const entry of uncompilable(readable, toolkit))
    problems.push(
      `${name}: ${entry} cannot be compiled by CUDA ${build.cuda} (targets ${toolkit!.sassTargets!.join(", ")})`,
    );
  if (claimsUnverifiedPtx(build)) problems.push(`${name}: claims PTX although its PTX is marked unverified`);
  problems.push(...secondPypiDefault(build, defaults));
  if (build.indexUrl !== `https://download.pytorch.org/whl/${build.variant}`)
    problems.push(`${name}: index URL ${build.indexUrl} does not match the variant`);
  return problems;
}

/** A PyPI default for a release and platform that already has one; records the build's otherwise. */
function secondPypiDefault(build: TorchBuildRow, defaults: Map<string, string>): string[] {
  if (!build.pypiDefault) return [];
  const key = `${build.torch} ${build.platform}`;
  const earlier = defaults.get(key);
  defaults.set(key, build.variant);
  return earlier === undefined ? [] : [`torch ${key}: two PyPI defaults (${earlier} and ${build.variant})`];
}

/** Per build; `seen` holds the channel/version/CUDA/platform keys of the rows before it. */
function condaBuildProblems({ data, toolkits }: Context): string[] {
  const seen = new Set<string>();
  return data.condaTorchBuilds.flatMap((build) => condaBuildRowProblems(build, toolkits, seen));
}

function condaBuildRowProblems(
  build: CondaTorchBuildRow,
  toolkits: Context["toolkits"],
  seen: Set<string>,
): string[] {
  const problems: string[] = [];
  const name = `conda ${build.channel} torch ${build.torch} ${build.cuda ? `CUDA ${build.cuda}` : "CPU"} ${build.platform}`;
  for (const version of build.versions)
    if (majorMinor(version) !== build.torch)
      problems.push(`${name}: version ${version} is not of ${build.torch}`);
  // Two rows may share a key only when they list different versions (a rebuild with another list).
  for (const version of build.versions.length > 0 ? build.versions : [`${build.torch}.*`]) {
    const key = `${build.channel}|${version}|${build.cuda}|${build.platform}`;
    if (seen.has(key)) problems.push(`${name}: version ${version} is listed twice`);
    seen.add(key);
  }
  const toolkit = toolkitOf(toolkits, build.cuda);
  if (build.cuda && !toolkit) problems.push(`${name}: CUDA ${build.cuda} is not in the toolkit table`);
  if (!build.cuda && build.archList.length > 0) problems.push(`${name}: a CPU build with an arch list`);
  for (const entry of uncompilable(build.archList, toolkit))
    problems.push(`${name}: ${entry} cannot be compiled by CUDA ${build.cuda}`);
  if (claimsUnverifiedPtx(build)) problems.push(`${name}: claims PTX although its PTX is marked unverified`);
  if (build.channel === "pytorch" && build.platform !== "linux-x86_64")
    problems.push(`${name}: the pytorch channel publishes no CUDA builds for ${build.platform}`);
  return problems;
}

function gpuRowProblems(gpu: GpuRow, data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  if (!data.archs.some((row) => row.computeCapability === gpu.computeCapability))
    problems.push(`GPU ${gpu.name}: capability ${gpu.computeCapability} is not in the arch table`);
  const { bf16, fp16, tf32 } = gpu.peakTflops;
  // Dense tensor TF32 is half of dense BF16 on every NVIDIA part with both; a sparse figure would break it.
  if (bf16 && tf32 && Math.abs(bf16 / tf32 - 2) > 0.05)
    problems.push(`GPU ${gpu.name}: BF16 ${bf16} vs TF32 ${tf32} is not 2:1 (sparse figure?)`);
  if (bf16 && fp16 && bf16 !== fp16) problems.push(`GPU ${gpu.name}: BF16 and FP16 tensor peaks differ`);
  const mib = gpu.nvidiaSmiMemoryMiB;
  // A vendor's "80 GB" of GPU memory is 80 GiB of chips; nvidia-smi shows that less what the
  // driver reserves (ECC, firmware): 90-100 % of it. Outside that band a unit is mixed up.
  if (mib && gpu.memoryGB) {
    const share = mib / (gpu.memoryGB * 1024);
    if (share < 0.9 || share > 1)
      problems.push(
        `GPU ${gpu.name}: nvidia-smi ${mib} MiB is ${Math.round(share * 100)} % of ${gpu.memoryGB} GB (expected 90-100 %: a unit mix-up?)`,
      );
  }
  return problems;
}

/** Every extension the KB knows is import-checked by doctor and validate. */
function extensionsWithoutImportCheck(data: KnowledgeBaseData): string[] {
  const checked = new Set(data.importChecks.flatMap((row) => row.distributions.map(normalizeName)));
  return data.extensions
    .filter((ext) => !checked.has(normalizeName(ext.name)))
    .map((ext) => `extension ${ext.name}: no import-checks row names it among its distributions`);
}

function extensionProblems(ext: ExtensionRow, toolkits: Context["toolkits"]): string[] {
  const name = `extension ${ext.name}`;
  const urls = new Set(ext.sources.map((source) => source.url));
  const problems = ext.buildFromSourceFor
    .filter((cc) => ext.supportedComputeCapabilities.includes(cc))
    .map((cc) => `${name}: ${cc} is both supported and listed as needing a source build`);
  for (const build of ext.builds ?? []) problems.push(...extensionBuildProblems(ext, build, urls, toolkits));
  if (ext.buildEnv && !urls.has(ext.buildEnv.source))
    problems.push(`${name}: its buildEnv source ${ext.buildEnv.source} is not among the row's sources`);
  for (const hazard of ext.installHazards ?? [])
    if (!urls.has(hazard.source))
      problems.push(
        `${name}: install hazard on ${hazard.platform} cites ${hazard.source}, not among the row's sources`,
      );
  return [...problems, ...extensionCoverageProblems(ext)];
}

function extensionBuildProblems(
  ext: ExtensionRow,
  build: ExtensionBuild,
  urls: Set<string>,
  toolkits: Context["toolkits"],
): string[] {
  const problems: string[] = [];
  const buildName = `extension ${ext.name} ${build.version}${build.cuda ? ` CUDA ${build.cuda}` : ""}`;
  if (!urls.has(build.source))
    problems.push(`${buildName}: its source ${build.source} is not among the row's sources`);
  if (build.platforms.some((platform) => !ext.platforms.includes(platform)))
    problems.push(`${buildName}: a build platform is missing from the row's platforms`);
  for (const entry of uncompilable(build.targets, toolkitOf(toolkits, build.cuda)))
    problems.push(`${buildName}: ${entry} cannot be compiled by CUDA ${build.cuda}`);
  return problems;
}

/**
 * The row's capability lists against the code its current builds carry: a capability said to need
 * a source build that a build serves, or one said to be supported that no build has SASS for.
 */
function extensionCoverageProblems(ext: ExtensionRow): string[] {
  const current = currentBuilds(ext).filter((build) => build.targets.length > 0);
  if (current.length === 0) return [];
  const problems: string[] = [];
  const name = `extension ${ext.name}`;
  for (const cc of ext.buildFromSourceFor) {
    const device = rowCapability(cc);
    const serving = current.find((build) => coverageFor(build.targets, device).how !== "none");
    if (serving)
      problems.push(
        `${name}: ${cc} is listed as needing a source build, but the ${serving.version}${serving.cuda ? ` CUDA ${serving.cuda}` : ""} build carries code for it`,
      );
  }
  for (const cc of ext.supportedComputeCapabilities) {
    const device = rowCapability(cc);
    if (!current.some((build) => coverageFor(build.targets, device).how === "sass"))
      problems.push(
        `${name}: ${cc} is listed as supported, but no ${current[0]!.version} build carries SASS for it`,
      );
  }
  return problems;
}

function systemProblems({ data, toolkits }: Context): string[] {
  const problems: string[] = [];
  const gpuNames = new Set(data.gpus.map((gpu) => gpu.name));
  for (const system of data.systems) {
    if (!gpuNames.has(system.gpu))
      problems.push(`system ${system.name}: GPU ${system.gpu} is not in the GPU table`);
    const toolkit = toolkitOf(toolkits, system.cuda);
    if (system.cuda && !toolkit)
      problems.push(`system ${system.name}: CUDA ${system.cuda} is not in the toolkit table`);
    // nvidia-smi's "CUDA Version" is the newest runtime the driver runs natively.
    if (
      toolkit &&
      system.driver &&
      compareDriverVersions(rowDriver(system.driver), rowDriver(toolkit.minDriverLinux)) < 0
    )
      problems.push(
        `system ${system.name}: driver ${system.driver} is older than CUDA ${toolkit.version}'s ${toolkit.minDriverLinux}`,
      );
  }
  return problems;
}

/** A package, release and platform answered by two wheel-pythons rows. */
function wheelPythonDuplicates(data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  const releaseRows = new Map<string, number>();
  data.wheelPythons.forEach((row, index) => {
    for (const platform of row.platforms)
      for (const release of row.releases) {
        const key = `${row.package} ${release} ${platform}`;
        const seen = releaseRows.get(key);
        if (seen !== undefined)
          problems.push(`wheel pythons: ${key} is in rows ${seen + 1} and ${index + 1}`);
        releaseRows.set(key, index);
      }
  });
  return problems;
}

/** A source given as a repository path that is not there (checked only when the repository is known). */
function missingLocalSources({ data, repoRoot }: Context): string[] {
  if (!repoRoot) return [];
  const problems: string[] = [];
  const tables = Object.entries(data) as Array<[string, Array<{ sources: Array<{ url: string }> }>]>;
  for (const [table, rows] of tables)
    for (const row of rows)
      for (const source of row.sources)
        if (!source.url.startsWith("http") && !existsSync(`${repoRoot}/${source.url}`))
          problems.push(`${table}: source ${source.url} does not exist in the repository`);
  return problems;
}
/** A package-requirements row whose release range pip cannot read, or two rows answering one release. */
function packageRequirementProblems(data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  const rows = data.packageRequirements;
  for (const row of rows) {
    const name = `package ${row.package} ${row.versions}`;
    if (satisfies("0", row.versions) === null)
      problems.push(`${name}: the release range is not a PEP 440 specifier`);
    if (row.torch && !["any", "none"].includes(row.torch) && satisfies("2.0.0", row.torch) === null)
      problems.push(`${name}: torch "${row.torch}" is neither a specifier nor any/none`);
    if (row.requiresPython && satisfies("3.12", row.requiresPython) === null)
      problems.push(`${name}: requires-python "${row.requiresPython}" is not a specifier`);
  }
  // Every exact release the rows name ("==0.7.3") is answered by one row only.
  for (const row of rows) {
    const exact = /^==\s*([\w.]+)$/.exec(row.versions)?.[1];
    if (!exact) continue;
    const others = rows.filter(
      (other) => other !== row && other.package === row.package && satisfies(exact, other.versions) === true,
    );
    for (const other of others)
      problems.push(`package ${row.package} ${exact}: in rows ${row.versions} and ${other.versions}`);
  }
  return problems;
}
