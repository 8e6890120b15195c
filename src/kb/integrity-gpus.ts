/**
 * Contradictions in the GPU and arch tables that their schemas cannot see: a name that joins two
 * memory sizes (an alias of one row that another row's name starts with), a shared-name row whose
 * figures are not its variants' common ones, a driver floor that does not follow from the toolkit
 * table. One line per problem.
 */
import { compareDriverVersions } from "../vocabulary/driver-version.js";
import { rowDriver } from "./driver.js";
import type { KnowledgeBaseData } from "./load.js";
import type { GpuRow } from "./types.js";
import { compactName } from "./queries/gpu.js";

/** The keys a row answers to, as the resolver compares them (queries/gpu.ts). */
function keys(row: GpuRow): string[] {
  return [row.name, ...row.aliases].map(compactName);
}

/** The keys that are the row's own name, spelled as the resolver also accepts it ("rtx5070" and "5070"). */
function ownNameKeys(row: GpuRow): Set<string> {
  const own = compactName(row.name);
  return new Set([own, own.startsWith("rtx") ? own.slice(3) : own]);
}

/**
 * An alias of a row that another row (of its own, not a shared name) is also called by, or whose
 * name starts with it, joins two GPUs: the second one's memory and peaks would be answered with the
 * first's. A shared-name row (`variants`) is the one place such a name may live.
 */
function aliasProblems(gpus: GpuRow[]): string[] {
  const problems: string[] = [];
  const concrete = gpus.filter((row) => !row.variants);
  for (const row of concrete) {
    const own = ownNameKeys(row);
    for (const alias of row.aliases) {
      const key = compactName(alias);
      // An alias that names a memory size names that part: it must be this row's size.
      const stated = /(\d+)\s*gb/i.exec(alias)?.[1];
      if (stated && row.memoryGB !== null && Number(stated) !== row.memoryGB)
        problems.push(`GPU ${row.name}: alias "${alias}" names ${stated} GB, the row has ${row.memoryGB} GB`);
      if (own.has(key)) continue;
      for (const other of concrete) {
        if (other === row || !keys(other).some((otherKey) => otherKey.startsWith(key))) continue;
        const memory =
          other.memoryGB !== row.memoryGB
            ? ` (${row.memoryGB ?? "?"} GB vs ${other.memoryGB ?? "?"} GB)`
            : "";
        problems.push(`GPU ${row.name}: alias "${alias}" also names ${other.name}${memory}`);
      }
    }
  }
  const seen = new Map<string, string>();
  for (const row of gpus)
    for (const key of new Set(keys(row))) {
      const first = seen.get(key);
      if (first && first !== row.name) problems.push(`GPU name "${key}" is both ${first} and ${row.name}`);
      seen.set(key, row.name);
    }
  return problems;
}

function minOf(values: Array<number | null | undefined>): number | null {
  if (values.some((value) => value === null || value === undefined)) return null;
  return Math.min(...(values as number[]));
}

function sameOrNull<T>(values: T[]): T | null {
  return values.every((value) => value === values[0]) ? (values[0] ?? null) : null;
}

/** A shared-name row carries what its variants share: their capability, the smallest memory, common peaks. */
function familyProblems(gpus: GpuRow[]): string[] {
  const problems: string[] = [];
  const byName = new Map(gpus.map((row) => [row.name, row]));
  for (const family of gpus.filter((row) => row.variants)) {
    const name = `GPU ${family.name}`;
    const variants = (family.variants ?? []).map((variant) => byName.get(variant));
    if (variants.some((variant) => !variant || variant.variants)) {
      problems.push(`${name}: a variant is not a GPU row of its own`);
      continue;
    }
    const rows = variants as GpuRow[];
    for (const field of ["computeCapability", "architecture", "hostCpuArch", "unifiedMemory"] as const)
      if (rows.some((row) => row[field] !== family[field]))
        problems.push(`${name}: its variants differ in ${field}`);
    if (family.memoryGB !== minOf(rows.map((row) => row.memoryGB)))
      problems.push(`${name}: memory ${family.memoryGB} GB is not its smallest variant's`);
    if ((family.nvidiaSmiMemoryMiB ?? null) !== minOf(rows.map((row) => row.nvidiaSmiMemoryMiB)))
      problems.push(
        `${name}: nvidia-smi memory is not its smallest variant's (or not every variant's is known)`,
      );
    for (const peak of ["bf16", "fp16", "tf32", "fp32"] as const)
      if (family.peakTflops[peak] !== sameOrNull(rows.map((row) => row.peakTflops[peak])))
        problems.push(`${name}: ${peak} peak is not the one every variant has`);
    if (family.memoryBandwidthGBs !== sameOrNull(rows.map((row) => row.memoryBandwidthGBs)))
      problems.push(`${name}: bandwidth is not the one every variant has`);
    if (family.minDriverLinux) problems.push(`${name}: a shared name carries no driver floor of its own`);
  }
  return problems;
}

/** Driver floors: an arch floor is its first toolkit's GA driver; a GPU floor says what it rests on. */
function driverFloorProblems(data: KnowledgeBaseData): string[] {
  const problems: string[] = [];
  const toolkits = new Map(data.cudaToolkits.map((row) => [row.version, row]));
  for (const arch of data.archs) {
    const floor = arch.driverFloor;
    if (!floor) continue;
    const name = `arch ${arch.computeCapability}`;
    if (arch.tegra) problems.push(`${name}: a Jetson part's driver comes with JetPack, not a driver floor`);
    if (!arch.sources.some((source) => source.url === floor.source))
      problems.push(`${name}: driver floor source ${floor.source} is not among the row's sources`);
    const toolkit = toolkits.get(floor.firstCuda);
    if (toolkit && toolkit.minDriverLinux !== floor.minDriverLinux)
      problems.push(
        `${name}: driver floor ${floor.minDriverLinux} is not CUDA ${floor.firstCuda}'s GA driver ${toolkit.minDriverLinux}`,
      );
    const sm = arch.computeCapability.replace(".", "");
    if (toolkit?.sassTargets && !toolkit.sassTargets.includes(sm))
      problems.push(`${name}: CUDA ${floor.firstCuda}, its first toolkit, does not compile sm_${sm}`);
  }
  for (const gpu of data.gpus) {
    if ((gpu.minDriverLinux ? 1 : 0) !== (gpu.minDriverBasis ? 1 : 0))
      problems.push(`GPU ${gpu.name}: minDriverLinux and minDriverBasis must be given together`);
    const archFloor = data.archs.find(
      (arch) => arch.computeCapability === gpu.computeCapability,
    )?.driverFloor;
    if (
      gpu.minDriverLinux &&
      archFloor &&
      compareDriverVersions(rowDriver(gpu.minDriverLinux), rowDriver(archFloor.minDriverLinux)) < 0
    )
      problems.push(
        `GPU ${gpu.name}: its floor ${gpu.minDriverLinux} is below its architecture's ${archFloor.minDriverLinux}`,
      );
  }
  return problems;
}

export function gpuContradictions(data: KnowledgeBaseData): string[] {
  return [...aliasProblems(data.gpus), ...familyProblems(data.gpus), ...driverFloorProblems(data)];
}
