/** A named system (DGX Spark, Jetson AGX Thor) by the name a user types. */
import type { SystemRow } from "../types.js";
import { compactName } from "./gpu.js";

export function systemByName(rows: SystemRow[], text: string): SystemRow | null {
  const wanted = compactName(text);
  if (wanted === "") return null;
  return rows.find((row) => [row.name, ...row.aliases].some((name) => compactName(name) === wanted)) ?? null;
}
