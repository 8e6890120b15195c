/**
 * What a package's own metadata requires: requires-python and the torch requirement of a release
 * (or of every release the table has, newest range first). Ranges are PEP 440 specifiers read as
 * pip reads them (util/pep440.ts).
 */
import type { PackageRequirementsRow } from "../types.js";
import { normalizeName } from "../../util/package-name.js";
import { satisfies } from "../../util/pep440.js";

export interface PackageRequirementsAnswer {
  /** The normalized name asked about. */
  package: string;
  /** The release asked about, or null: every row of the package. */
  version: string | null;
  /** found: rows answer; not-in-table: rows exist for other releases only; absent: no rows at all. */
  status: "found" | "not-in-table" | "absent";
  /** The matching rows (one for a release inside a range), in table order. */
  rows: PackageRequirementsRow[];
  /** requires-python of the one matching row; null when none or when several rows answer. */
  requiresPython: string | null;
  /** The torch requirement of the one matching row ("==2.5.1", "any", "none"); null likewise. */
  torch: string | null;
}

export function packageRequirementsFor(
  rows: PackageRequirementsRow[],
  name: string,
  version?: string | null,
): PackageRequirementsAnswer {
  const wanted = normalizeName(name);
  const all = rows.filter((row) => normalizeName(row.package) === wanted);
  const asked = version?.trim() || null;
  const matching = asked ? all.filter((row) => satisfies(asked, row.versions) === true) : all;
  const status = matching.length > 0 ? "found" : all.length > 0 ? "not-in-table" : "absent";
  const one = asked && matching.length === 1 ? (matching[0] as PackageRequirementsRow) : null;
  return {
    package: wanted,
    version: asked,
    status,
    rows: matching,
    requiresPython: one?.requiresPython ?? null,
    torch: one?.torch ?? null,
  };
}
