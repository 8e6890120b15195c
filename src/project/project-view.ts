/** What the project in the current directory asks for torch, across its manifests. */
import type { Facts, ProjectFacts, Requirement } from "../facts/schema.js";

const TORCH_FAMILY = new Set(["torch", "torchvision", "torchaudio"]);

/** torch requirements a default install would apply: project deps, the dev group (uv syncs it by default), requirements files. */
export function projectTorchRequirements(
  facts: Facts,
  names: Set<string> = new Set(["torch"]),
): Requirement[] {
  const project = facts.project;
  if (!project) return [];
  const out: Requirement[] = [];
  if (project.pyproject) {
    out.push(...project.pyproject.dependencies);
    out.push(...(project.pyproject.dependencyGroups.dev ?? []));
  }
  for (const file of project.requirementsFiles) out.push(...file.requirements);
  return out.filter((r) => names.has(r.normalizedName));
}

export function torchFamilyRequirements(facts: Facts): Requirement[] {
  return projectTorchRequirements(facts, TORCH_FAMILY);
}

/** torch's version in uv.lock, when the project has one that locks torch. */
export function lockedTorch(facts: Facts): string | null {
  const lock = facts.project?.uvLock;
  return lock?.packages.find((p) => p.name === "torch")?.version ?? null;
}

/** A project uv manages: a uv.lock, or [tool.uv] settings in pyproject.toml. */
export function isUvProject(facts: Facts): boolean {
  return facts.project ? isUvManaged(facts.project) : false;
}

/** isUvProject for the project alone. */
export function isUvManaged(project: ProjectFacts): boolean {
  if (project.uvLock) return true;
  const uv = project.pyproject?.uv;
  return (
    !!uv &&
    (Object.keys(uv.sources).length > 0 || uv.indexes.length > 0 || uv.overrideDependencies.length > 0)
  );
}
