/** What a GPU name (as nvidia-smi, torch or a user writes it) or a capability refers to. */
import { formatComputeCapability, parseComputeCapability, type ComputeCapability } from "../compat.js";
import type { GpuRow } from "../types.js";

export interface GpuResolution {
  match: GpuRow | null;
  /**
   * The closest rows by name, best first (for "did you mean" messages); empty on a match. A name
   * several rows start with ("Jetson Orin Nano") gives no match and those rows.
   */
  candidates: GpuRow[];
}

/** Vendor and family words nvidia-smi adds that users leave out. */
const NOISE = /\b(nvidia|geforce|tesla|graphics|gpu)\b/g;

/** "NVIDIA GeForce RTX 5070 Ti" -> "rtx5070ti"; "5070ti" -> "5070ti". */
export function compactName(text: string): string {
  return text
    .toLowerCase()
    .replace(NOISE, " ")
    .replace(/[^a-z0-9]+/g, "");
}

function keysOf(row: GpuRow): string[] {
  const keys = [row.name, ...row.aliases].map(compactName);
  // "rtx5070ti" is also typed as "5070ti": accept both without listing every spelling.
  for (const key of [...keys]) if (key.startsWith("rtx") && /^\d/.test(key.slice(3))) keys.push(key.slice(3));
  return keys;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        previous + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      previous = saved;
    }
  }
  return row[b.length] as number;
}

/** The first row listed with this capability, or null. */
export function firstGpuWith(rows: GpuRow[], cc: ComputeCapability): GpuRow | null {
  const key = formatComputeCapability(cc);
  return rows.find((row) => row.computeCapability === key) ?? null;
}

export function resolveGpu(rows: GpuRow[], text: string): GpuResolution {
  const query = text.trim();
  if (query === "") return { match: null, candidates: [] };
  // A capability ("12.1", "sm_120") stands for the first GPU listed with it.
  if (/^(sm_)?\d{2,3}[af]?$|^\d{1,2}\.\d$/i.test(query)) {
    const cc = parseComputeCapability(query);
    const first = cc ? firstGpuWith(rows, cc) : null;
    if (first) return { match: first, candidates: [] };
  }
  const wanted = compactName(query);
  if (wanted === "") return { match: null, candidates: [] };
  const exact = rows.find((row) => keysOf(row).includes(wanted));
  if (exact) return { match: exact, candidates: [] };
  // A name typed short of a full one ("RTX PRO 6000 Blackwell Server", "Jetson Orin Nano"): the
  // rows whose name starts with it. One row is the answer; several are variants that differ (in
  // memory, bandwidth), so ask which rather than pick one.
  if (wanted.length >= 5) {
    const completing = rows.filter((row) => keysOf(row).some((key) => key.startsWith(wanted)));
    if (completing.length === 1) return { match: completing[0] as GpuRow, candidates: [] };
    if (completing.length > 1) return { match: null, candidates: completing.slice(0, 5) };
  }
  // nvidia-smi names can carry a memory suffix we have not listed ("... 94GB"): accept a unique
  // row whose key is a prefix of the query.
  const prefixed = rows.filter((row) => keysOf(row).some((key) => key.length >= 3 && wanted.startsWith(key)));
  const longest = (row: GpuRow) =>
    Math.max(
      ...keysOf(row)
        .filter((key) => wanted.startsWith(key))
        .map((key) => key.length),
    );
  prefixed.sort((a, b) => longest(b) - longest(a));
  if (
    prefixed.length > 0 &&
    (prefixed.length === 1 || longest(prefixed[0] as GpuRow) > longest(prefixed[1] as GpuRow))
  )
    return { match: prefixed[0] as GpuRow, candidates: [] };
  const scored = rows.map((row) => ({
    row,
    score: Math.min(
      ...keysOf(row).map((key) =>
        key.includes(wanted) || wanted.includes(key) ? 0 : editDistance(key, wanted),
      ),
    ),
  }));
  scored.sort((a, b) => a.score - b.score);
  const candidates = scored.filter((entry) => entry.score <= Math.max(3, wanted.length / 2)).slice(0, 5);
  return { match: null, candidates: candidates.map((entry) => entry.row) };
}

/** "NVIDIA GeForce RTX 5090" -> "RTX 5090", "Tesla T4" -> "T4": the name without the vendor words. */
function readableName(name: string): string {
  return name
    .replace(/\b(NVIDIA|GeForce|Tesla)\b/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** How many names of one architecture a hint shows, so that it reaches back to older GPUs. */
const NAMES_PER_ARCHITECTURE = 2;

/** The row's shortest readable spelling, keeping "RTX" where its name has it ("RTX 5070 Ti", not "5070 Ti"). */
function typedName(row: GpuRow): string {
  const own = readableName(row.name);
  const spellings = [row.name, ...row.aliases]
    .map(readableName)
    .filter((s) => /[A-Z]/.test(s) && (!own.includes("RTX") || s.includes("RTX")));
  return spellings.sort((a, b) => a.length - b.length)[0] ?? own;
}

/**
 * GPU names a person would type, for a hint when a name is unknown: the systems ("DGX Spark"),
 * then GPUs newest capability first, two per architecture, each by its name without vendor words
 * and one of a family's memory or form-factor variants ("H100", not also "H100 80GB HBM3").
 */
export function readableGpuNames(
  gpus: readonly GpuRow[],
  systems: readonly { name: string; gpu: string }[],
  limit: number,
): string[] {
  const names: string[] = systems.map((system) => system.name);
  const perArchitecture = new Map<string, number>();
  const byCapability = [...gpus].sort((a, b) => Number(b.computeCapability) - Number(a.computeCapability));
  for (const row of byCapability) {
    if (systems.some((system) => system.gpu === row.name)) continue;
    const shown = perArchitecture.get(row.architecture) ?? 0;
    const name = typedName(row);
    const sameFamily = (other: string) =>
      name === other || name.startsWith(`${other} `) || name.startsWith(`${other}-`);
    if (shown >= NAMES_PER_ARCHITECTURE || names.some(sameFamily)) continue;
    names.push(name);
    perArchitecture.set(row.architecture, shown + 1);
  }
  return names.slice(0, limit);
}
