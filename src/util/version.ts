/** Dotted numeric versions (drivers "580.65.06", CUDA "12.8", torch "2.11.0+cu130"). */

/** The numeric parts of a version, ignoring any local tag (+cu130) or pre-release suffix. */
export function versionParts(version: string): number[] {
  const core = version.trim().split("+")[0] ?? "";
  const parts: number[] = [];
  for (const piece of core.split(".")) {
    const match = /^(\d+)/.exec(piece);
    if (!match) break;
    parts.push(Number(match[1]));
  }
  return parts;
}

/** Negative when a < b, 0 when equal on the parts both have (missing parts count as 0), positive when a > b. */
export function compareVersions(a: string, b: string): number {
  const pa = versionParts(a);
  const pb = versionParts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
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
