/**
 * Cross-table contradictions the schemas cannot see: a torch build claiming an arch its CUDA
 * cannot compile, a toolkit whose GA driver is below its own minor-compatibility floor, two PyPI
 * defaults for one release, a GPU of an unknown capability or whose nvidia-smi memory does not fit
 * its marketed size. Returns one line per problem.
 */
import { existsSync } from "node:fs";
import { coverageFor, parseCodeTarget, parseComputeCapability } from "./compat.js";
import { currentBuilds } from "./queries/extensions.js";
import { ngcContradictions } from "./integrity-ngc.js";
import { gpuContradictions } from "./integrity-gpus.js";
import type { KnowledgeBaseData } from "./load.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { normalizeName } from "../util/package-name.js";
import { satisfies } from "../util/pep440.js";

export function findContradictions(data: KnowledgeBaseData, repoRoot?: string): string[] {
  const problems: string[] = [];
  const toolkits = new Map(data.cudaToolkits.map((row) => [row.version, row]));
  const archs = new Set(data.archs.map((row) => row.computeCapability));

  for (const row of data.cudaToolkits) {
    if (
      row.minorCompatMinDriverLinux &&
      compareVersions(row.minDriverLinux, row.minorCompatMinDriverLinux) < 0
    )
      problems.push(
        `CUDA ${row.version}: GA driver ${row.minDriverLinux} is below its minor-compat floor ${row.minorCompatMinDriverLinux}`,
      );
  }
  const byVersion = [...data.cudaToolkits].sort((a, b) => compareVersions(a.version, b.version));
  for (let i = 1; i < byVersion.length; i++) {
    const previous = byVersion[i - 1]!;
    const current = byVersion[i]!;
    if (compareVersions(current.minDriverLinux, previous.minDriverLinux) < 0)
      problems.push(
        `CUDA ${current.version} needs an older driver (${current.minDriverLinux}) than CUDA ${previous.version} (${previous.minDriverLinux})`,
      );
  }

  const defaults = new Map<string, string>();
  for (const build of data.torchBuilds) {
    const name = `torch ${build.torch} ${build.variant} ${build.platform}`;
    if (build.cuda && `cu${build.cuda.replace(".", "")}` !== build.variant)
      problems.push(`${name}: variant does not match CUDA ${build.cuda}`);
    const toolkit = build.cuda ? toolkits.get(build.cuda) : undefined;
    if (build.cuda && !toolkit) problems.push(`${name}: CUDA ${build.cuda} is not in the toolkit table`);
    for (const entry of build.archList) {
      const target = parseCodeTarget(entry);
      if (!target) continue;
      const sm = `${target.major}${target.minor}`;
      if (toolkit?.sassTargets && !toolkit.sassTargets.includes(sm))
        problems.push(
          `${name}: ${entry} cannot be compiled by CUDA ${build.cuda} (targets ${toolkit.sassTargets.join(", ")})`,
        );
    }
    if (build.ptxUnverified && build.archList.some((entry) => entry.startsWith("compute_")))
      problems.push(`${name}: claims PTX although its PTX is marked unverified`);
    if (build.pypiDefault) {
      const key = `${build.torch} ${build.platform}`;
      if (defaults.has(key))
        problems.push(`torch ${key}: two PyPI defaults (${defaults.get(key)} and ${build.variant})`);
      defaults.set(key, build.variant);
    }
    if (build.indexUrl !== `https://download.pytorch.org/whl/${build.variant}`)
      problems.push(`${name}: index URL ${build.indexUrl} does not match the variant`);
  }

  const condaKeys = new Set<string>();
  for (const build of data.condaTorchBuilds) {
    const name = `conda ${build.channel} torch ${build.torch} ${build.cuda ? `CUDA ${build.cuda}` : "CPU"} ${build.platform}`;
    for (const version of build.versions)
      if (majorMinor(version) !== build.torch)
        problems.push(`${name}: version ${version} is not of ${build.torch}`);
    // Two rows may share a key only when they list different versions (a rebuild with another list).
    for (const version of build.versions.length > 0 ? build.versions : [`${build.torch}.*`]) {
      const key = `${build.channel}|${version}|${build.cuda}|${build.platform}`;
      if (condaKeys.has(key)) problems.push(`${name}: version ${version} is listed twice`);
      condaKeys.add(key);
    }
    const toolkit = build.cuda ? toolkits.get(build.cuda) : undefined;
    if (build.cuda && !toolkit) problems.push(`${name}: CUDA ${build.cuda} is not in the toolkit table`);
    if (!build.cuda && build.archList.length > 0) problems.push(`${name}: a CPU build with an arch list`);
    for (const entry of build.archList) {
      const target = parseCodeTarget(entry);
      const sm = target ? `${target.major}${target.minor}` : "";
      if (toolkit?.sassTargets && !toolkit.sassTargets.includes(sm))
        problems.push(`${name}: ${entry} cannot be compiled by CUDA ${build.cuda}`);
    }
    if (build.ptxUnverified && build.archList.some((entry) => entry.startsWith("compute_")))
      problems.push(`${name}: claims PTX although its PTX is marked unverified`);
    if (build.channel === "pytorch" && build.platform !== "linux-x86_64")
      problems.push(`${name}: the pytorch channel publishes no CUDA builds for ${build.platform}`);
  }

  for (const gpu of data.gpus) {
    if (!archs.has(gpu.computeCapability))
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
  }

  problems.push(...ngcContradictions(data), ...gpuContradictions(data), ...packageRequirementProblems(data));

  // Every extension the KB knows is import-checked by doctor and validate.
  const checked = new Set(data.importChecks.flatMap((row) => row.distributions.map(normalizeName)));
  for (const ext of data.extensions)
    if (!checked.has(normalizeName(ext.name)))
      problems.push(`extension ${ext.name}: no import-checks row names it among its distributions`);
  for (const ext of data.extensions) {
    const name = `extension ${ext.name}`;
    for (const cc of ext.buildFromSourceFor)
      if (ext.supportedComputeCapabilities.includes(cc))
        problems.push(`${name}: ${cc} is both supported and listed as needing a source build`);
    const urls = new Set(ext.sources.map((source) => source.url));
    for (const build of ext.builds ?? []) {
      const buildName = `${name} ${build.version}${build.cuda ? ` CUDA ${build.cuda}` : ""}`;
      if (!urls.has(build.source))
        problems.push(`${buildName}: its source ${build.source} is not among the row's sources`);
      if (build.platforms.some((platform) => !ext.platforms.includes(platform)))
        problems.push(`${buildName}: a build platform is missing from the row's platforms`);
      const toolkit = build.cuda ? toolkits.get(build.cuda) : undefined;
      for (const entry of build.targets) {
        const target = parseCodeTarget(entry);
        const sm = target ? `${target.major}${target.minor}` : "";
        if (toolkit?.sassTargets && !toolkit.sassTargets.includes(sm))
          problems.push(`${buildName}: ${entry} cannot be compiled by CUDA ${build.cuda}`);
      }
    }
    if (ext.buildEnv && !urls.has(ext.buildEnv.source))
      problems.push(`${name}: its buildEnv source ${ext.buildEnv.source} is not among the row's sources`);
    for (const hazard of ext.installHazards ?? [])
      if (!urls.has(hazard.source))
        problems.push(
          `${name}: install hazard on ${hazard.platform} cites ${hazard.source}, not among the row's sources`,
        );
    const current = currentBuilds(ext).filter((build) => build.targets.length > 0);
    if (current.length === 0) continue;
    for (const cc of ext.buildFromSourceFor) {
      const device = parseComputeCapability(cc)!;
      const serving = current.find((build) => coverageFor(build.targets, device).how !== "none");
      if (serving)
        problems.push(
          `${name}: ${cc} is listed as needing a source build, but the ${serving.version}${serving.cuda ? ` CUDA ${serving.cuda}` : ""} build carries code for it`,
        );
    }
    for (const cc of ext.supportedComputeCapabilities) {
      const device = parseComputeCapability(cc)!;
      if (!current.some((build) => coverageFor(build.targets, device).how === "sass"))
        problems.push(
          `${name}: ${cc} is listed as supported, but no ${current[0]!.version} build carries SASS for it`,
        );
    }
  }

  const gpuNames = new Set(data.gpus.map((gpu) => gpu.name));
  for (const system of data.systems) {
    if (!gpuNames.has(system.gpu))
      problems.push(`system ${system.name}: GPU ${system.gpu} is not in the GPU table`);
    const toolkit = system.cuda ? toolkits.get(system.cuda) : undefined;
    if (system.cuda && !toolkit)
      problems.push(`system ${system.name}: CUDA ${system.cuda} is not in the toolkit table`);
    // nvidia-smi's "CUDA Version" is the newest runtime the driver runs natively.
    if (toolkit && system.driver && compareVersions(system.driver, toolkit.minDriverLinux) < 0)
      problems.push(
        `system ${system.name}: driver ${system.driver} is older than CUDA ${toolkit.version}'s ${toolkit.minDriverLinux}`,
      );
  }
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

  if (repoRoot) {
    const tables = Object.entries(data) as Array<[string, Array<{ sources: Array<{ url: string }> }>]>;
    for (const [table, rows] of tables)
      for (const row of rows)
        for (const source of row.sources)
          if (!source.url.startsWith("http") && !existsSync(`${repoRoot}/${source.url}`))
            problems.push(`${table}: source ${source.url} does not exist in the repository`);
  }
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
