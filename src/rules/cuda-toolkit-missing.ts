/**
 * No CUDA compiler for a build the project makes certain: a package it asks for has no published
 * binary for this GPU and platform (knowledge base verdict "source-build"), so pip falls back to
 * the sdist, whose setup.py needs nvcc (F55, F89 in docs/failures.md).
 *
 * Narrower than the catalog's R08 on purpose: packages the knowledge base calls "jit" (compiling
 * at run time) are left out, because Triton-based ones (triton, unsloth) bring their own ptxas and
 * the knowledge base does not say which of them run nvcc; packages already installed are left out,
 * as their build is done; without a GPU capability the verdict cannot be asked, so it stays silent.
 */
import type { Facts, ProjectFacts, Requirement } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { evaluateMarker } from "../util/pep508-marker.js";
import { majorMinor } from "../util/version.js";
import { platformOfCpu, predictTorchInstalls } from "../project/install-prediction.js";
import { deviceCapabilities } from "../rule-helpers/view.js";
import { describeToolkit } from "../rule-helpers/toolkit-view.js";

/** Every requirement a default install of the project applies (dependencies, dev group, requirements files). */
function projectRequirements(project: NonNullable<ProjectFacts>): Requirement[] {
  const out: Requirement[] = [];
  if (project.pyproject)
    out.push(...project.pyproject.dependencies, ...(project.pyproject.dependencyGroups.dev ?? []));
  for (const file of project.requirementsFiles) out.push(...file.requirements);
  return out;
}

/**
 * The project's requirements, as a default install applies them here (markers judged), not
 * installed yet, that the knowledge base says build from source for this GPU and platform.
 */
function sourceBuilds(
  facts: Facts,
  project: NonNullable<ProjectFacts>,
  kb: KnowledgeBase,
): Array<{ requirement: Requirement; reason: string }> {
  const platform = platformOfCpu(facts.host.cpuArch);
  const device = deviceCapabilities(facts)[0];
  if (!platform || !device) return [];
  const markers = {
    platform_machine: facts.host.cpuArch,
    sys_platform: "linux",
    platform_system: "Linux",
    os_name: "posix",
    python_version: majorMinor(facts.python.interpreter.version),
  };
  const installed = new Set(facts.python.distributions.map((d) => d.normalizedName));
  return projectRequirements(project)
    .filter((r) => r.marker === null || evaluateMarker(r.marker, markers) === true)
    .filter((r) => !installed.has(r.normalizedName))
    .flatMap((r) => {
      const [verdict] = kb.extensionVerdicts({ computeCapability: device.cc, platform }, [r.name]);
      return verdict?.verdict === "source-build" ? [{ requirement: r, reason: verdict.reason }] : [];
    });
}

export const cudaToolkitMissing: Rule = {
  id: "cuda-toolkit-missing",
  title: "A package must be built from source, and there is no CUDA toolkit",
  severity: "warning",
  check(facts, kb) {
    const toolkit = facts.python.toolkit;
    // Absent in older snapshots: unknown, not missing.
    if (!toolkit || toolkit.nvcc !== null || !facts.project) return [];
    const builds = sourceBuilds(facts, facts.project, kb);
    if (builds.length === 0) return [];
    const names = builds.map((b) => b.requirement.name).join(", ");
    // The CUDA the build must match: the installed torch's, else the one the project's install would bring.
    const torchCuda =
      facts.python.torch?.cudaVersion ??
      predictTorchInstalls(facts, kb).flatMap((p) => p.builds.map((b) => b.cuda))[0] ??
      null;
    const version = torchCuda ?? "X.Y";
    const notFound =
      toolkit.home === null
        ? "CUDA_HOME and CUDA_PATH are unset, no nvcc is on PATH and there is no /usr/local/cuda"
        : `${describeToolkit(toolkit)} has no bin/nvcc`;
    return [
      makeFinding(this, {
        message: `Installing the project builds ${names} from source here (${builds[0]!.reason}), and there is no CUDA compiler for it: ${notFound}. The build stops with "CUDA_HOME environment variable is not set" or "nvcc was not found".`,
        evidence: [
          ...builds.map((b) => ev(b.requirement.origin, `${b.requirement.raw}: ${b.reason}`)),
          ev("CUDA toolkit", notFound),
          ...(torchCuda
            ? [
                ev(
                  facts.python.torch?.cudaVersion
                    ? "installed torch's CUDA"
                    : "CUDA of the torch the project installs",
                  torchCuda,
                ),
              ]
            : []),
        ],
        fix: {
          summary: `Install a CUDA toolkit ${torchCuda ? `of torch's CUDA ${torchCuda}` : "whose major matches torch's CUDA"} (or build in a devel image) and point CUDA_HOME at it before installing.`,
          commands: [
            `# Ubuntu/Debian with NVIDIA's CUDA repository: sudo apt-get install cuda-toolkit-${version.replace(".", "-")}`,
            `export CUDA_HOME=/usr/local/cuda-${version} PATH=/usr/local/cuda-${version}/bin:$PATH`,
          ],
        },
      }),
    ];
  },
};
