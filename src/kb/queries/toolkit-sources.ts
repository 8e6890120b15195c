/**
 * The sources behind some facts of a CUDA toolkit row. A decision cites what it rests on: a torch
 * build's driver floor cites the release notes' driver tables, an nvcc for a source build cites
 * the toolkit's target list, and neither cites the other's sources.
 */
import type { CudaToolkitFact, CudaToolkitRow } from "../types.js";

/** The driver facts: the GA driver and the minor-version compatibility floor. */
export const DRIVER_FACTS: readonly CudaToolkitFact[] = ["minDriverLinux", "minorCompatMinDriverLinux"];

/** The URLs of `row`'s sources that state any of `facts`, in the row's order; none for no row. */
export function toolkitSources(
  row: CudaToolkitRow | null | undefined,
  facts: readonly CudaToolkitFact[],
): string[] {
  if (!row) return [];
  return row.sources.filter((source) => source.backs.some((fact) => facts.includes(fact))).map((s) => s.url);
}
