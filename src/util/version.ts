/** Dotted numeric versions (drivers "580.65.06", CUDA "12.8", torch "2.11.0+cu130"). */

/**
 * The leading number of each dot-separated piece, up to the first piece without one:
 * "2.5.1rc1" -> [2, 5, 1], "1.x.3" -> [1]. Conda versions are read with it as they are.
 */
export function leadingNumbers(text: string): number[] {
  const parts: number[] = [];
  for (const piece of text.split(".")) {
    const match = /^(\d+)/.exec(piece);
    if (!match) break;
    parts.push(Number(match[1]));
  }
  return parts;
}

/**
 * Release numbers compared part by part, a missing part counting as 0 ([12, 8] equals [12, 8, 0]):
 * negative when a < b, 0 when equal, positive when a > b. The one comparison every version reader
 * here (dotted, PEP 440, PEP 508 markers, conda) shares.
 */
export function compareNumberLists(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** The numeric parts of a version, ignoring any local tag (+cu130) or pre-release suffix. */
export function versionParts(version: string): number[] {
  return leadingNumbers(version.trim().split("+")[0] ?? "");
}

/** Negative when a < b, 0 when equal on the parts both have (missing parts count as 0), positive when a > b. */
export function compareVersions(a: string, b: string): number {
  return compareNumberLists(versionParts(a), versionParts(b));
}

/** "12.8.1" -> "12.8"; "13" -> "13.0". */
export function majorMinor(version: string): string {
  const [major = 0, minor = 0] = versionParts(version);
  return `${major}.${minor}`;
}

/** The local version tag of a PEP 440 version: "2.11.0+cu130" -> "cu130", else null. */
export function localTag(version: string): string | null {
  const plus = version.indexOf("+");
  return plus >= 0 ? version.slice(plus + 1) : null;
}
