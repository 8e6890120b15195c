/**
 * The project's runtime requirements, from pyproject.toml [project.dependencies], every
 * requirements*.txt, and the default environment of a pixi.toml or an environment.yml (conda names
 * mapped to PyPI ones, conda-only packages left out with a note), one entry per package (the first
 * one seen wins; later ones are reported). In a uv project the `dev` dependency group counts too:
 * `uv sync` installs it by default (uv docs, concepts/projects/dependencies.md, "Default groups"),
 * and doctor's install prediction reads it the same way. Optional dependencies and other groups are
 * left to the user: a plain `uv sync` or `pip install .` does not install them either.
 */
import type { ProjectFacts, Requirement } from "../facts/schema.js";
import { condaRequirements, type CondaPythonPin } from "./conda-requirements.js";
import { isUvManaged } from "./project-view.js";

interface ProjectRequirements {
  requirements: Requirement[];
  /** Same package required twice with different specifiers, as "name: a (origin) vs b (origin)". */
  duplicates: string[];
  /** What the pixi / conda manifests contributed and left out, for the plan's notes. */
  notes: string[];
  /** The pixi / environment.yml `python` pins. */
  pythonPins: CondaPythonPin[];
}

export function projectRequirements(project: ProjectFacts): ProjectRequirements {
  const conda = condaRequirements(project);
  const all = [
    ...(project.pyproject?.dependencies ?? []),
    ...(isUvManaged(project) ? (project.pyproject?.dependencyGroups["dev"] ?? []) : []),
    ...project.requirementsFiles.flatMap((file) => file.requirements),
    ...conda.requirements,
  ];
  const byName = new Map<string, Requirement>();
  const duplicates: string[] = [];
  for (const requirement of all) {
    // `-e .` and other local paths are the project itself, not a dependency to pin.
    if (requirement.url !== null && /^(\.|\/|file:)/.test(requirement.url)) continue;
    const seen = byName.get(requirement.normalizedName);
    if (!seen) byName.set(requirement.normalizedName, requirement);
    else if (seen.specifier !== requirement.specifier || seen.url !== requirement.url)
      duplicates.push(
        `${requirement.name}: ${seen.raw} (${seen.origin}) vs ${requirement.raw} (${requirement.origin})`,
      );
  }
  return { requirements: [...byName.values()], duplicates, notes: conda.notes, pythonPins: conda.pythonPins };
}
