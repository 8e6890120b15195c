/**
 * Which extensions must be compiled for the target: those the user names, and those whose
 * published binaries (per the knowledge base) carry no code this GPU can run.
 */
import type { Requirement } from "../facts/schema.js";
import type { CpuArch, KnowledgeBase } from "../kb/index.js";
import type { ExtensionBuildEnv, ExtensionRow } from "../kb/types.js";
import { coverageFor, parseComputeCapability } from "../kb/compat.js";
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

export function decideSourceBuilds(
  kb: KnowledgeBase,
  requirements: Requirement[],
  asked: string[],
  computeCapability: string,
  cpuArch: CpuArch,
  providedByBase: Set<string>,
): SourceBuildDecision {
  const platform = platformOf(cpuArch);
  const builds: SourceBuild[] = [];
  const decisions: Decision[] = [];
  const warnings: string[] = [];
  const byName = new Map(requirements.map((r) => [r.normalizedName, r]));
  const askedNames = asked.map(normalizeName);
  for (const name of askedNames) {
    if (!byName.has(name) && !kb.extension(name))
      throw new UserError(
        `--build-from-source ${name}: the project does not require it and gpuprep knows no package of that name`,
        "name a package from the project's requirements",
      );
  }
  // triton: PyPI has no sdist to build (triton-lang/triton#8380), and a build would bundle the same
  // ptxas; what a new GPU needs is a ptxas that knows it (jit-toolchain.ts).
  const askedJitPackages = askedNames.filter((name) => compilesAtRunTime(kb.extension(name)));
  const names = [...new Set([...askedNames, ...byName.keys()])].filter((n) => !askedJitPackages.includes(n));
  for (const name of names) {
    const requirement = byName.get(name);
    const row = kb.extension(name);
    const sources = row?.sources.map((s) => s.url) ?? [];
    const build = (reason: string) => {
      const env = row?.buildEnv ? ownBuildEnv(row.buildEnv, computeCapability) : {};
      if (row?.buildEnv && !(row.buildEnv.archVariable in env)) {
        // A build that cannot serve the GPU is not planned: it would take an hour and fail at run time.
        warnings.push(
          `${row.name}: its build compiles only ${row.buildEnv.archValues.map((v) => `sm_${v}`).join(", ")} (${row.buildEnv.archVariable}), none of which runs on compute capability ${computeCapability}: a source build cannot serve this GPU, so none is planned`,
        );
        return;
      }
      builds.push({
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
      decisions.push({
        topic: `build ${name}`,
        choice: `from source for compute capability ${computeCapability} only`,
        reason,
        sources,
      });
    };
    if (askedNames.includes(name)) {
      build(
        providedByBase.has(name)
          ? `asked with --build-from-source: replaces the base image's ${name}`
          : "asked with --build-from-source",
      );
      continue;
    }
    if (!row) continue;
    if (providedByBase.has(name)) {
      decisions.push({
        topic: `build ${name}`,
        choice: "no: the base image's build is kept",
        reason: `the base image provides ${name}, built for the GPUs it supports`,
        sources,
      });
      continue;
    }
    // The KB's verdict weighs the GPU and the platform: a package with no aarch64 wheel needs a
    // build on DGX Spark even where its x86_64 wheels carry the right kernels.
    const verdict = kb.extensionVerdicts({ computeCapability, platform }, [row.name])[0];
    if (!verdict) continue;
    const offIndex = offIndexOnly(row);
    if (verdict.verdict !== "source-build" && verdict.verdict !== "jit" && offIndex) {
      build(`${offIndex} (knowledge base)`);
    } else if (verdict.verdict === "source-build") {
      build(`${verdict.reason} (knowledge base)`);
    } else if (verdict.verdict === "unknown") {
      warnings.push(
        `${row.name}: ${verdict.reason}; the knowledge base cannot say whether its binaries serve ${computeCapability} on ${platform}. After installing, check it with \`gpuprep doctor\`, or pass --build-from-source ${name}`,
      );
    } else if (verdict.how === "ptx-jit") {
      warnings.push(
        `${row.name}: ${verdict.reason}; the first use compiles its kernels, and a source build would avoid that`,
      );
    }
  }
  return { builds, decisions, warnings, askedJitPackages };
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
function ownBuildEnv(buildEnv: ExtensionBuildEnv, computeCapability: string): Record<string, string> {
  const cc = parseComputeCapability(computeCapability);
  const runs = cc
    ? buildEnv.archValues.filter((value) => coverageFor([`sm_${value}`], cc).how === "sass")
    : [];
  const best = runs.sort((a, b) => Number(b) - Number(a))[0];
  return { ...(best ? { [buildEnv.archVariable]: best } : {}), ...buildEnv.force };
}
