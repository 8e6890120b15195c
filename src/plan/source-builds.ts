/**
 * Which extensions must be compiled for the target: those the user names, and those whose
 * published binaries (per the knowledge base) carry no code this GPU can run.
 */
import type { Requirement } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { canRunTarget, parseComputeCapability } from "../kb/compat.js";
import { normalizeName } from "../gather/requirement.js";
import { UserError } from "../errors.js";
import type { Decision, SourceBuild } from "./types.js";

export interface SourceBuildDecision {
  builds: SourceBuild[];
  decisions: Decision[];
  warnings: string[];
}

/** Does any of the capabilities (as "8.0") have SASS that runs on the device (same major, minor <=)? */
function binariesRunOn(capabilities: string[], device: string): boolean {
  const cc = parseComputeCapability(device);
  if (!cc) return false;
  return capabilities.some((text) => {
    const target = parseComputeCapability(text);
    if (!target) return false;
    const verdict = canRunTarget(
      {
        kind: "sass",
        major: target.major,
        minor: target.minor,
        suffix: "",
        name: `sm_${target.major}${target.minor}`,
      },
      cc,
    );
    return verdict.runs;
  });
}

export function decideSourceBuilds(
  kb: KnowledgeBase,
  requirements: Requirement[],
  asked: string[],
  computeCapability: string,
  providedByBase: Set<string>,
): SourceBuildDecision {
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
  const names = [...new Set([...askedNames, ...byName.keys()])];
  for (const name of names) {
    const requirement = byName.get(name);
    const row = kb.extension(name);
    const sources = row?.sources.map((s) => s.url) ?? [];
    const build = (reason: string) => {
      builds.push({
        name: row?.name ?? requirement?.name ?? name,
        requirement: requirement?.raw ?? name,
        archList: computeCapability,
        reason,
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
    if (row.buildFromSourceFor.includes(computeCapability)) {
      build(
        `${row.name}'s published binaries do not serve compute capability ${computeCapability} (knowledge base)`,
      );
    } else if (
      row.supportedComputeCapabilities.length > 0 &&
      !binariesRunOn(row.supportedComputeCapabilities, computeCapability)
    ) {
      build(
        `${row.name}'s binaries carry kernels for ${row.supportedComputeCapabilities.join(", ")}, none of which runs on ${computeCapability}`,
      );
    } else if (row.supportedComputeCapabilities.length === 0) {
      warnings.push(
        `${row.name}: the knowledge base does not say which GPUs its binaries serve; after the build, check it with \`gpuprep doctor\``,
      );
    }
  }
  return { builds, decisions, warnings };
}
