/**
 * Does an extension package's published binary run on a GPU + platform, or must it be built from
 * source there? Reads the row's `builds` where they were sourced, else its
 * supportedComputeCapabilities / buildFromSourceFor, and always its `platforms` and
 * `installHazards`.
 */
import { coverageFor, formatComputeCapability, type ComputeCapability } from "../compat.js";
import type { ExtensionBuild, ExtensionPlatform, ExtensionRow } from "../types.js";

export interface ExtensionQuery {
  computeCapability: ComputeCapability;
  platform: ExtensionPlatform;
}

export interface ExtensionVerdict {
  name: string;
  /**
   * prebuilt: a published binary carries code that runs here (SASS, or PTX the driver JITs);
   * jit: the package ships no GPU code and compiles its kernels here at run time;
   * source-build: no published binary runs here; unknown: the row does not say.
   */
  verdict: "prebuilt" | "jit" | "source-build" | "unknown";
  /** For prebuilt: native SASS or the driver's PTX JIT. */
  how: "sass" | "ptx-jit" | null;
  /** The current release's builds for this platform that serve the GPU (empty unless prebuilt or jit). */
  builds: ExtensionBuild[];
  reason: string;
}

/** The builds of the row's current release: those of the first build's version. */
export function currentBuilds(row: ExtensionRow): ExtensionBuild[] {
  const builds = row.builds ?? [];
  const current = builds[0]?.version;
  return builds.filter((build) => build.version === current);
}

type Verdict = (
  kind: ExtensionVerdict["verdict"],
  reason: string,
  how?: ExtensionVerdict["how"],
  builds?: ExtensionBuild[],
) => ExtensionVerdict;

/** Why the row alone rules out a published binary here: listed as needing a source build, a hazard, a missing platform. */
function rowSourceBuildReason(row: ExtensionRow, key: string, platform: ExtensionPlatform): string | null {
  if (row.buildFromSourceFor.includes(key)) return `no published ${row.name} binary runs on ${key}`;
  const hazard = row.installHazards?.find((entry) => entry.platform === platform);
  if (hazard) return hazard.problem;
  if (row.platforms.length > 0 && !row.platforms.includes(platform))
    return `${row.name} publishes no binary for ${platform} (only ${row.platforms.join(", ")})`;
  return null;
}

/** A row whose current builds were sourced: the builds for the platform, and the code they carry. */
function verdictFromBuilds(
  row: ExtensionRow,
  current: ExtensionBuild[],
  query: ExtensionQuery,
  cc: ComputeCapability,
  verdict: Verdict,
): ExtensionVerdict {
  const key = `${cc.major}.${cc.minor}`;
  const here = current.filter((build) => build.platforms.includes(query.platform));
  if (here.length === 0)
    return verdict("source-build", `${row.name} ${current[0]!.version} has no build for ${query.platform}`);
  if (here.every((build) => build.targets.length === 0)) {
    if (row.supportedComputeCapabilities.length === 0)
      return verdict(
        "jit",
        `${row.name} compiles its kernels on this machine for the GPU it finds; the compiler it uses must know ${key}`,
        null,
        here,
      );
    return row.supportedComputeCapabilities.includes(key)
      ? verdict("jit", `${row.name} compiles its kernels at run time for ${key}`, null, here)
      : verdict("unknown", `${row.name} compiles at run time; its support for ${key} is not recorded`);
  }
  const sass = here.filter((build) => coverageFor(build.targets, cc).how === "sass");
  if (sass.length > 0)
    return verdict("prebuilt", `${row.name} ${sass[0]!.version} carries SASS for ${key}`, "sass", sass);
  const ptx = here.filter((build) => coverageFor(build.targets, cc).how === "ptx-jit");
  if (ptx.length > 0)
    return verdict(
      "prebuilt",
      `${row.name} ${ptx[0]!.version} runs on ${key} only through the driver's PTX JIT`,
      "ptx-jit",
      ptx,
    );
  return verdict(
    "source-build",
    `no ${row.name} ${current[0]!.version} build for ${query.platform} carries code for ${key}`,
  );
}

/**
 * No per-build data. A package that compiles its kernels on the user's machine serves the GPUs
 * its project lists (any its compiler knows, where it lists none); otherwise the row's
 * capability list stands for SASS targets.
 */
function verdictFromCapabilities(
  row: ExtensionRow,
  cc: ComputeCapability,
  verdict: Verdict,
): ExtensionVerdict {
  const key = `${cc.major}.${cc.minor}`;
  if (row.distribution.includes("jit")) {
    if (row.supportedComputeCapabilities.length === 0)
      return verdict(
        "jit",
        `${row.name} compiles its kernels on this machine at run time; the compiler it uses must know ${key}`,
      );
    return row.supportedComputeCapabilities.includes(key)
      ? verdict("jit", `${row.name} compiles its kernels on this machine at run time for ${key}`)
      : verdict("unknown", `${row.name} compiles at run time; its support for ${key} is not recorded`);
  }
  const targets = row.supportedComputeCapabilities.map((entry) => `sm_${entry.replace(".", "")}`);
  const coverage = coverageFor(targets, cc);
  const platformNote = row.platforms.length === 0 ? " (its platforms are not recorded)" : "";
  if (coverage.how !== "none")
    return verdict("prebuilt", `${row.name} is built for ${coverage.via[0]}${platformNote}`, "sass");
  return verdict("unknown", `${row.name} does not list ${key}${platformNote}`);
}

export function extensionVerdict(row: ExtensionRow, query: ExtensionQuery): ExtensionVerdict {
  const verdict: Verdict = (kind, reason, how = null, builds = []) => ({
    name: row.name,
    verdict: kind,
    how,
    builds,
    reason,
  });
  const cc = query.computeCapability;
  const sourceBuild = rowSourceBuildReason(row, formatComputeCapability(cc), query.platform);
  if (sourceBuild) return verdict("source-build", sourceBuild);
  const current = currentBuilds(row);
  return current.length > 0
    ? verdictFromBuilds(row, current, query, cc, verdict)
    : verdictFromCapabilities(row, cc, verdict);
}
