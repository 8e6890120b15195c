/**
 * The nvcc a source build needs: the CUDA major torch was built with (torch's extension builder
 * refuses another major), at least torch's own major.minor, and a release of that major that
 * compiles SASS for the GPU (sm_121 needs CUDA 12.9 or later in CUDA 12). The generated scripts
 * check it before spending minutes on a build.
 */
import { toolkitSources, type KnowledgeBase } from "../kb/index.js";
import { compareVersions, majorMinor, versionParts } from "../util/version.js";
import type { BuildToolkit } from "./types.js";
import { smDigits, type ComputeCapability } from "../vocabulary/compute-capability.js";

export function nvccNeeded(
  kb: KnowledgeBase,
  torchCuda: string | null,
  cc: ComputeCapability,
): BuildToolkit | null {
  if (!torchCuda) return null;
  const torchSeries = majorMinor(torchCuda);
  const major = String(versionParts(torchSeries)[0] ?? "");
  const sm = smDigits(cc);
  const sameMajor = kb.data.cudaToolkits
    .filter((row) => String(versionParts(row.version)[0]) === major)
    .sort((a, b) => compareVersions(a.version, b.version));
  const torchToolkit = sameMajor.find((row) => row.version === torchSeries) ?? null;
  const compiling = sameMajor.filter((row) => row.sassTargets?.includes(sm));
  const atOrAbove = compiling.find((row) => compareVersions(row.version, torchSeries) >= 0) ?? null;
  const reasons = [
    `torch is built with CUDA ${torchSeries}, and torch's extension builder needs an nvcc of that major (${major}.x), at least ${torchSeries}`,
  ];
  let minimum = torchSeries;
  let evidence = torchToolkit;
  if (atOrAbove && atOrAbove.version === torchSeries) {
    reasons.push(`CUDA ${torchSeries} compiles sm_${sm}`);
  } else if (atOrAbove) {
    minimum = atOrAbove.version;
    evidence = atOrAbove;
    reasons.push(
      `sm_${sm} needs CUDA ${atOrAbove.version} or newer (the oldest ${major}.x in the table that compiles it)`,
    );
  } else if (torchToolkit && !torchToolkit.sassTargets && compiling.length > 0) {
    evidence = compiling[compiling.length - 1] ?? null;
    reasons.push(
      `CUDA ${evidence?.version} compiles sm_${sm}; CUDA ${torchSeries}'s target list is not in the knowledge base`,
    );
  } else {
    reasons.push(
      `no CUDA ${major}.x at or after ${torchSeries} in the knowledge base is known to compile sm_${sm}`,
    );
  }
  const sources = [
    ...toolkitSources(torchToolkit, ["sassTargets"]),
    ...(evidence !== torchToolkit ? toolkitSources(evidence, ["sassTargets"]) : []),
  ];
  return { major, minimum, reason: reasons.join("; "), sources: [...new Set(sources)] };
}
