/**
 * Wheel file names and which one an installer picks for a machine: the binary distribution
 * format's name (https://packaging.python.org/en/latest/specifications/binary-distribution-format/),
 * with PEP 825's variant label as an optional last part, and the platform compatibility tags
 * (https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/) in the
 * order packaging.tags.sys_tags() gives them for CPython on Linux: the most specific tag first.
 */

export interface WheelName {
  distribution: string;
  version: string;
  build: string | null;
  /** Each of python.abi.platform may be a dotted set ("py2.py3"). */
  pythonTags: string[];
  abiTags: string[];
  platformTags: string[];
  /** PEP 825: the variant label, or null for a non-variant wheel. */
  variant: string | null;
}

const VARIANT_LABEL = /^[0-9a-z_.]{1,16}$/;

/** The parts of a wheel's file name; null when it is not one. */
export function parseWheelName(filename: string): WheelName | null {
  if (!filename.endsWith(".whl")) return null;
  const parts = filename.slice(0, -4).split("-");
  if (parts.length < 5 || parts.length > 7) return null;
  const [distribution, version] = parts as [string, string];
  let build: string | null = null;
  let variant: string | null = null;
  let tags: string[];
  if (parts.length === 5) tags = parts.slice(2);
  else if (parts.length === 7) {
    build = parts[2] as string;
    tags = parts.slice(3, 6);
    variant = parts[6] as string;
  } else if (/^\d/.test(parts[2] as string)) {
    // Six parts: a build tag starts with a digit, a python tag never does.
    build = parts[2] as string;
    tags = parts.slice(3);
  } else {
    tags = parts.slice(2, 5);
    variant = parts[5] as string;
  }
  if (build !== null && !/^\d\w*$/.test(build)) return null;
  if (variant !== null && !VARIANT_LABEL.test(variant)) return null;
  const [python, abi, platform] = tags as [string, string, string];
  if (!distribution || !version || !python || !abi || !platform) return null;
  return {
    distribution,
    version,
    build,
    pythonTags: python.split("."),
    abiTags: abi.split("."),
    platformTags: platform.split("."),
    variant,
  };
}

export type CpuArch = "x86_64" | "aarch64";

export interface TargetPlatform {
  arch: CpuArch;
  /** "3.12" */
  python: string;
  /** The newest glibc of the machine, as [2, 39]. */
  glibc: [number, number];
}

/** manylinux_2_N_ARCH for N from the machine's glibc down, with the legacy aliases where they apply. */
function platformTags(target: TargetPlatform): string[] {
  const [major, newest] = target.glibc;
  const tags: string[] = [];
  const lowest = target.arch === "x86_64" ? 5 : 17;
  for (let minor = newest; minor >= lowest; minor--) {
    tags.push(`manylinux_${major}_${minor}_${target.arch}`);
    if (minor === 17) tags.push(`manylinux2014_${target.arch}`);
    if (minor === 12 && target.arch === "x86_64") tags.push(`manylinux2010_${target.arch}`);
    if (minor === 5 && target.arch === "x86_64") tags.push(`manylinux1_${target.arch}`);
  }
  tags.push(`linux_${target.arch}`);
  return tags;
}

/**
 * Every python-abi-platform triple the machine installs, best first (packaging.tags: cpython_tags,
 * then compatible_tags).
 */
function supportedTags(target: TargetPlatform): string[] {
  const [major, minor] = target.python.split(".").map(Number) as [number, number];
  const cp = `cp${major}${minor}`;
  const platforms = platformTags(target);
  const tags: string[] = [];
  for (const platform of platforms) tags.push(`${cp}-${cp}-${platform}`);
  for (const platform of platforms) tags.push(`${cp}-abi3-${platform}`);
  for (const platform of platforms) tags.push(`${cp}-none-${platform}`);
  for (let older = minor - 1; older >= 2; older--)
    for (const platform of platforms) tags.push(`cp${major}${older}-abi3-${platform}`);
  const pythons = [
    `py${major}${minor}`,
    `py${major}`,
    ...Array.from({ length: minor }, (_, i) => `py${major}${minor - 1 - i}`),
  ];
  for (const python of pythons) for (const platform of platforms) tags.push(`${python}-none-${platform}`);
  tags.push(`${cp}-none-any`);
  for (const python of pythons) tags.push(`${python}-none-any`);
  return tags;
}

/** The best (lowest) index of this wheel's tags in `supported`, or null when none is supported. */
export function tagRank(wheel: WheelName, supported: Map<string, number>): number | null {
  let best: number | null = null;
  for (const python of wheel.pythonTags)
    for (const abi of wheel.abiTags)
      for (const platform of wheel.platformTags) {
        const rank = supported.get(`${python}-${abi}-${platform}`);
        if (rank !== undefined && (best === null || rank < best)) best = rank;
      }
  return best;
}

export function tagIndex(target: TargetPlatform): Map<string, number> {
  return new Map(supportedTags(target).map((tag, index) => [tag, index]));
}

/** A wheel for every platform ("any"): pure Python, no native code to scan. */
export function isPureWheel(wheel: WheelName): boolean {
  return wheel.platformTags.every((tag) => tag === "any");
}
