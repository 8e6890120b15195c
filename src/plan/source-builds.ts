/**
 * Which extensions must be compiled for the target: those the user names, and those whose
 * published binaries (per the knowledge base) carry no code this GPU can run.
 */
import type { Requirement } from "../facts/schema.js";
import type { CpuArch, KnowledgeBase } from "../kb/index.js";
import type { ExtensionBuildEnv, ExtensionRow } from "../kb/types.js";
import { coverageFor, formatComputeCapability, type ComputeCapability } from "../kb/compat.js";
import { platformOf } from "../kb/queries/torch.js";
import { normalizeName } from "../util/package-name.js";
import { UserError } from "../errors.js";
import type { Decision, SourceBuild } from "./types.js";

export interface SourceBuildDecision {
  builds: SourceBuild[];
  decisions: Decision[];
  warnings: string[];
  /** --build-from-source named a package that compiles its kernels at run time (triton): answered by its toolchain, not a build. */
  askedJitPackages: string[];
}

/** Packages with no kernels of their own (they compile on first use): a pip source build changes nothing. */
function compilesAtRunTime(row: ExtensionRow | null): boolean {
  return row !== null && row.distribution.includes("jit");
}

/** What the builds are decided for. */
interface BuildTarget {
  kb: KnowledgeBase;
  capability: ComputeCapability;
  /** The capability as messages and TORCH_CUDA_ARCH_LIST write it ("12.1"). */
  computeCapability: string;
  platform: ReturnType<typeof platformOf>;
  providedByBase: Set<string>;
}

/** A package asked for by name must be the project's or one gpuprep knows. */
function refuseUnknownAsked(kb: KnowledgeBase, askedNames: string[], byName: Map<string, Requirement>): void {
  for (const name of askedNames) {
    if (!byName.has(name) && !kb.extension(name))
      throw new UserError(
        `--build-from-source ${name}: the project does not require it and gpuprep knows no package of that name`,
        "name a package from the project's requirements",
      );
  }
}

/** Plans a source build of `name` for the GPU, unless its own build cannot compile for it (then warns). */
function planBuild(
  out: SourceBuildDecision,
  target: BuildTarget,
  candidate: { name: string; requirement: Requirement | undefined; row: ExtensionRow | null },
  reason: string,
): void {
  const { name, requirement, row } = candidate;
  const { computeCapability } = target;
  const env = row?.buildEnv ? ownBuildEnv(row.buildEnv, target.capability) : {};
  if (row?.buildEnv && !(row.buildEnv.archVariable in env)) {
    // A build that cannot serve the GPU is not planned: it would take an hour and fail at run time.
    out.warnings.push(
      `${row.name}: its build compiles only ${row.buildEnv.archValues.map((v) => `sm_${v}`).join(", ")} (${row.buildEnv.archVariable}), none of which runs on compute capability ${computeCapability}: a source build cannot serve this GPU, so none is planned`,
    );
    return;
  }
  out.builds.push({
    name: row?.name ?? requirement?.name ?? name,
    requirement: requirement?.raw ?? name,
    archList: computeCapability,
    env,
    reason,
    inProject: requirement !== undefined,
    // A CUDA extension the KB knows (not one that compiles kernels at run time, like triton);
    // a package the KB does not know is not assumed to need nvcc.
    needsNvcc: row !== null && !row.distribution.includes("jit"),
  });
  out.decisions.push({
    topic: `build ${name}`,
    choice: `from source for compute capability ${computeCapability} only`,
    reason,
    sources: row?.sources.map((s) => s.url) ?? [],
  });
}

/**
 * A known extension the user did not name: kept where the base image provides it, built where its
 * binaries carry no code for the GPU (or exist off the indexes only), warned about where not known.
 */
function weighExtension(
  out: SourceBuildDecision,
  target: BuildTarget,
  candidate: { name: string; requirement: Requirement | undefined; row: ExtensionRow },
): void {
  const { name, row } = candidate;
  const { kb, capability, computeCapability, platform } = target;
  if (target.providedByBase.has(name)) {
    out.decisions.push({
      topic: `build ${name}`,
      choice: "no: the base image's build is kept",
      reason: `the base image provides ${name}, built for the GPUs it supports`,
      sources: row.sources.map((s) => s.url),
    });
    return;
  }
  // The KB's verdict weighs the GPU and the platform: a package with no aarch64 wheel needs a
  // build on DGX Spark even where its x86_64 wheels carry the right kernels.
  const verdict = kb.extensionVerdicts({ computeCapability: capability, platform }, [row.name])[0];
  if (!verdict) return;
  const offIndex = offIndexOnly(row);
  if (verdict.verdict !== "source-build" && verdict.verdict !== "jit" && offIndex) {
    planBuild(out, target, candidate, `${offIndex} (knowledge base)`);
  } else if (verdict.verdict === "source-build") {
    planBuild(out, target, candidate, `${verdict.reason} (knowledge base)`);
  } else if (verdict.verdict === "unknown") {
    out.warnings.push(
      `${row.name}: ${verdict.reason}; the knowledge base cannot say whether its binaries serve ${computeCapability} on ${platform}. After installing, check it with \`gpuprep doctor\`, or pass --build-from-source ${name}`,
    );
  } else if (verdict.how === "ptx-jit") {
    out.warnings.push(
      `${row.name}: ${verdict.reason}; the first use compiles its kernels, and a source build would avoid that`,
    );
  }
}

export function decideSourceBuilds(
  kb: KnowledgeBase,
  requirements: Requirement[],
  asked: string[],
  capability: ComputeCapability,
  cpuArch: CpuArch,
  providedByBase: Set<string>,
): SourceBuildDecision {
  const target: BuildTarget = {
    kb,
    capability,
    computeCapability: formatComputeCapability(capability),
    platform: platformOf(cpuArch),
    providedByBase,
  };
  const byName = new Map(requirements.map((r) => [r.normalizedName, r]));
  const askedNames = asked.map(normalizeName);
  refuseUnknownAsked(kb, askedNames, byName);
  // triton: PyPI has no sdist to build (triton-lang/triton#8380), and a build would bundle the same
  // ptxas; what a new GPU needs is a ptxas that knows it (jit-toolchain.ts).
  const askedJitPackages = askedNames.filter((name) => compilesAtRunTime(kb.extension(name)));
  const out: SourceBuildDecision = { builds: [], decisions: [], warnings: [], askedJitPackages };
  const names = [...new Set([...askedNames, ...byName.keys()])].filter((n) => !askedJitPackages.includes(n));
  for (const name of names) {
    const candidate = { name, requirement: byName.get(name), row: kb.extension(name) };
    if (askedNames.includes(name))
      planBuild(
        out,
        target,
        candidate,
        providedByBase.has(name)
          ? `asked with --build-from-source: replaces the base image's ${name}`
          : "asked with --build-from-source",
      );
    else if (candidate.row) weighExtension(out, target, { ...candidate, row: candidate.row });
  }
  return out;
}

/**
 * A package whose binaries exist only outside the package indexes (GitHub releases), so that pip
 * and uv get its source distribution: flash-attn's wheels are release assets for particular
 * torch, CUDA, Python and C++-ABI combinations the knowledge base does not list, and its setup.py
 * compiles when none matches. null for a package with index wheels.
 */
function offIndexOnly(row: ExtensionRow): string | null {
  const onIndex = row.distribution.some((d) => d === "pypi" || d === "pytorch-index");
  if (onIndex || !row.distribution.includes("github-releases")) return null;
  return `${row.name} publishes no wheel on a package index (its binaries are GitHub release assets for particular torch, CUDA and Python combinations, none of which the knowledge base confirms for this plan), so the install compiles it`;
}

/**
 * A package's own arch variable set to the one value its build knows that runs on this GPU (the
 * highest whose SASS the GPU runs: 12.1 -> "120"), plus the variables that force a local compile.
 * The arch variable is left out when no value runs here.
 */
function ownBuildEnv(buildEnv: ExtensionBuildEnv, cc: ComputeCapability): Record<string, string> {
  const runs = buildEnv.archValues.filter((value) => coverageFor([`sm_${value}`], cc).how === "sass");
  const best = runs.sort((a, b) => Number(b) - Number(a))[0];
  return { ...(best ? { [buildEnv.archVariable]: best } : {}), ...buildEnv.force };
}
