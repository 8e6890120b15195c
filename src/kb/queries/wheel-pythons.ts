/** Which Pythons a pinned package has wheels for on a platform, from the wheel-pythons table. */
import type { WheelPythonsRow } from "../types.js";
import { satisfies } from "../../util/pep440.js";
import { compareVersions } from "../../util/version.js";

export interface WheelPythonsAnswer {
  package: string;
  /** The releases of the table the specifier accepts (on this platform), oldest first. */
  releases: string[];
  /** Pythons some accepted release has a wheel for (plain and free-threaded), oldest first. */
  pythons: string[];
  /** Some accepted release has one wheel for every Python from this version on (the lowest such). */
  anyPythonFrom: string | null;
  rows: WheelPythonsRow[];
  /**
   * known: rows cover releases the specifier accepts; not-in-table: the table has rows for the
   * package here, but none for an accepted release; absent: no rows for the package here.
   */
  status: "known" | "not-in-table" | "absent";
}

function byPython(a: string, b: string): number {
  return compareVersions(a.replace("t", ""), b.replace("t", "")) || a.length - b.length;
}

export function wheelPythonsFor(
  rows: WheelPythonsRow[],
  packageName: string,
  specifier: string,
  platform: WheelPythonsRow["platforms"][number],
): WheelPythonsAnswer {
  const here = rows.filter((row) => row.package === packageName && row.platforms.includes(platform));
  const matched = here.filter((row) =>
    row.releases.some((release) => satisfies(release, specifier) === true),
  );
  const releases = matched
    .flatMap((row) => row.releases.filter((release) => satisfies(release, specifier) === true))
    .sort(compareVersions);
  const pythons = [...new Set(matched.flatMap((row) => row.pythons))].sort(byPython);
  const floors = matched
    .flatMap((row) => (row.anyPythonFrom ? [row.anyPythonFrom] : []))
    .sort(compareVersions);
  return {
    package: packageName,
    releases,
    pythons,
    anyPythonFrom: floors[0] ?? null,
    rows: matched,
    status: here.length === 0 ? "absent" : matched.length === 0 ? "not-in-table" : "known",
  };
}

/** Does an answer's set of wheels include one for this Python ("3.12")? */
export function hasWheelFor(answer: WheelPythonsAnswer, python: string): boolean {
  if (answer.pythons.includes(python)) return true;
  return (
    answer.anyPythonFrom !== null &&
    !python.endsWith("t") &&
    compareVersions(python, answer.anyPythonFrom) >= 0
  );
}

/** "3.9-3.12", "3.10 or newer" (one wheel for all), or both. */
export function describeWheelPythons(answer: WheelPythonsAnswer): string {
  const plain = answer.pythons.filter((p) => !p.endsWith("t"));
  const listed = plain.length > 1 ? `${plain[0]}-${plain[plain.length - 1]}` : (plain[0] ?? "");
  const any = answer.anyPythonFrom ? `${answer.anyPythonFrom} or newer (one wheel for all)` : "";
  return [listed, any].filter(Boolean).join(", ") || "none";
}
