/**
 * makePlan: the strategy (NGC container or native uv venv), the base, the protected packages, the
 * project's conflicting pins and the source builds, every decision with its reason and sources.
 * A pure function of the project's manifests, the target and the knowledge base.
 */
import type { ProjectFacts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { UserError } from "../errors.js";
import { basename } from "node:path";
import { chooseContainer, type ContainerOutcome } from "./choose-container.js";
import { chooseNative, type NativeOutcome } from "./choose-native.js";
import { projectRequirements } from "./project-requirements.js";
import { applyProtection } from "./protect.js";
import { decideSourceBuilds } from "./source-builds.js";
import { versionParts } from "../util/version.js";
import type { Decision, InitOptions, Plan, Strategy, TargetMachine } from "./types.js";

export type { Plan, InitOptions, TargetMachine, Decision, Strategy } from "./types.js";

function firstReasons(lines: string[]): string {
  return lines.slice(0, 3).join("; ") + (lines.length > 3 ? `; and ${lines.length - 3} more` : "");
}

/**
 * NGC images trail PyPI by a release or two, a price worth their tuned CUDA libraries and bundled
 * extensions; an image further behind (the newest sourced one may be years old) loses to native.
 */
const MAX_NGC_LAG = 2;

/** How many minor releases torch `older` is behind `newer` ("2.9.0a0+145a3a7bda" vs "2.13"); Infinity across majors. */
function minorReleasesBehind(older: string, newer: string): number {
  const [oMajor = 0, oMinor = 0] = versionParts(older);
  const [nMajor = 0, nMinor = 0] = versionParts(newer);
  if (oMajor !== nMajor) return oMajor < nMajor ? Infinity : 0;
  return Math.max(0, nMinor - oMinor);
}

function pickStrategy(
  options: InitOptions,
  target: TargetMachine,
  container: ContainerOutcome,
  native: NativeOutcome,
): { strategy: Strategy; decision: Decision } {
  const where = `compute capability ${target.computeCapability}, ${target.cpuArch}, driver ${target.driverVersion ?? "not given"}`;
  const containerWhyNot =
    container.rejections.length > 0
      ? firstReasons(container.rejections)
      : "the knowledge base has no NGC image rows";
  const nativeWhyNot =
    native.rejections.length > 0 ? firstReasons(native.rejections) : "no PyTorch build is known";
  if (options.strategy === "container") {
    if (!container.choice)
      throw new UserError(
        `no NGC PyTorch image runs on ${target.gpuName} (${where}): ${containerWhyNot}`,
        "try --strategy native, or pass the driver you will have with --driver",
      );
    return {
      strategy: "container",
      decision: {
        topic: "strategy",
        choice: "container",
        reason: "asked with --strategy container",
        sources: [],
      },
    };
  }
  if (options.strategy === "native") {
    if (!native.choice)
      throw new UserError(
        `no PyTorch build runs natively on ${target.gpuName} (${where}): ${nativeWhyNot}`,
        "try --strategy container, or a newer driver (--driver)",
      );
    return {
      strategy: "native",
      decision: { topic: "strategy", choice: "native", reason: "asked with --strategy native", sources: [] },
    };
  }
  const lag =
    container.choice && native.choice
      ? minorReleasesBehind(container.choice.image.torch, native.choice.build.torch)
      : 0;
  if (container.choice && lag <= MAX_NGC_LAG)
    return {
      strategy: "container",
      decision: {
        topic: "strategy",
        choice: "container",
        reason: `an NGC PyTorch image covers ${target.gpuName}: NVIDIA's build of torch and its CUDA libraries for this GPU, kept intact in the image (use --strategy native for a uv venv)`,
        sources: [],
      },
    };
  if (native.choice)
    return {
      strategy: "native",
      decision: {
        topic: "strategy",
        choice: "native",
        reason: container.choice
          ? `the newest NGC image that runs here, ${container.choice.image.tag}, brings torch ${container.choice.image.torch}, ${lag === Infinity ? "a major release" : `${lag} minor releases`} behind the native torch ${native.choice.build.torch}; images more than ${MAX_NGC_LAG} behind are passed over (use --strategy container to take it anyway)`
          : `no NGC image runs here (${containerWhyNot}); a PyTorch wheel runs natively`,
        sources: [],
      },
    };
  throw new UserError(
    `neither an NGC image nor a PyTorch wheel runs on ${target.gpuName} (${where})`,
    `container: ${containerWhyNot}. native: ${nativeWhyNot}`,
  );
}

export function makePlan(
  kb: KnowledgeBase,
  project: ProjectFacts,
  target: TargetMachine,
  options: InitOptions,
): Plan {
  const { requirements, duplicates, notes } = projectRequirements(project);
  const torchRequirement = requirements.find((r) => r.normalizedName === "torch") ?? null;
  const container = chooseContainer(kb, target);
  const native = chooseNative(
    kb,
    target,
    torchRequirement,
    options.python,
    project.pyproject?.requiresPython ?? null,
  );
  const { strategy, decision } = pickStrategy(options, target, container, native);
  const decisions: Decision[] = [
    {
      topic: "target",
      choice: `${target.gpuName}, compute capability ${target.computeCapability}, ${target.cpuArch}`,
      reason: `from ${target.origin}`,
      sources: kb.gpu(target.gpuName)?.sources.map((s) => s.url) ?? [],
    },
    decision,
  ];
  const warnings = [...duplicates.map((d) => `required twice: ${d}; the first is used`), ...notes];
  if (options.python && strategy === "container")
    warnings.push(`--python ${options.python} is ignored in a container: the image's own Python is used`);

  const chosen = strategy === "container" ? container : native;
  decisions.push(...chosen.decisions);
  const protectedPackages =
    strategy === "container" ? (container.choice?.protected ?? []) : (native.choice?.protected ?? []);
  if (strategy === "container" && container.choice?.image.numpy)
    protectedPackages.push({
      name: "numpy",
      version: container.choice.image.numpy,
      why: `${container.choice.image.image} (knowledge base)`,
    });
  const baseName =
    strategy === "container" ? (container.choice?.image.image ?? "the image") : "the planned torch";
  const protection = applyProtection(requirements, protectedPackages, baseName);
  if (strategy === "native" && native.torchPinConflict) {
    protection.conflicts.push({
      requirement: torchRequirement!,
      provided: native.choice?.build.torch ?? "",
      message: native.torchPinConflict,
    });
  }
  const provided = new Set(protectedPackages.map((p) => p.name));
  const sourceBuilds = decideSourceBuilds(
    kb,
    requirements,
    options.buildFromSource,
    target.computeCapability,
    target.cpuArch,
    strategy === "container" ? provided : new Set(),
  );
  decisions.push(...sourceBuilds.decisions);
  warnings.push(...sourceBuilds.warnings);
  const built = new Set(sourceBuilds.builds.map((b) => b.name.toLowerCase()));
  const install = protection.install.filter((r) => !built.has(r.normalizedName));
  if (options.jupyter)
    decisions.push({
      topic: "jupyter",
      choice: "a jupyter service on 127.0.0.1:8888 with a token",
      reason:
        "asked with --jupyter; bound to the loopback interface and never without a token (JUPYTER_TOKEN)",
      sources: [],
    });
  if (strategy === "container")
    decisions.push({
      topic: "shared memory",
      choice: options.shmSize ? `shm_size ${options.shmSize}` : "ipc: host",
      reason: options.shmSize
        ? "asked with --shm-size"
        : "DataLoader workers pass batches through /dev/shm; Docker's default 64 MB makes them die with a bus error",
      sources: [],
    });
  return {
    project: {
      dir: project.dir,
      name: project.pyproject?.name ?? basename(project.dir),
      hasPyproject: project.pyproject !== null,
      requirementsFiles: project.requirementsFiles.map((f) => f.path),
    },
    target,
    strategy,
    requiredDriver: chosen.requiredDriver ?? "",
    container: strategy === "container" ? container.choice : null,
    native: strategy === "native" ? native.choice : null,
    install,
    conflicts: protection.conflicts,
    sourceBuilds: sourceBuilds.builds,
    options,
    decisions,
    warnings,
  };
}
