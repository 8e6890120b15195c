/** Which project requirements a protected package (the base's torch, numpy ...) conflicts with. */
import type { Requirement } from "../facts/schema.js";
import { satisfies } from "../util/pep440.js";
import type { PinConflict, ProtectedPackage } from "./types.js";

/** `provided` of a conflict whose base version the KB does not know: not a certain break, so auto does not weigh it. */
export const UNKNOWN_VERSION = "the base's version";

interface ProtectionResult {
  /** Requirements left to install (protected packages are the base's already). */
  install: Requirement[];
  conflicts: PinConflict[];
}

/**
 * @param reportUnknown an image (true): a pin on a package it ships whose version the KB does not
 * know is reported as left out; a native venv (false) installs torch itself, so its pin is no conflict.
 */
export function applyProtection(
  requirements: Requirement[],
  protectedPackages: ProtectedPackage[],
  baseName: string,
  reportUnknown = false,
): ProtectionResult {
  const byName = new Map(protectedPackages.map((p) => [p.name, p]));
  const install: Requirement[] = [];
  const conflicts: PinConflict[] = [];
  for (const requirement of requirements) {
    const kept = byName.get(requirement.normalizedName);
    if (!kept) {
      install.push(requirement);
      continue;
    }
    const provided = kept.version ?? UNKNOWN_VERSION;
    if (requirement.url !== null) {
      conflicts.push({
        requirement,
        provided,
        message: `${requirement.raw} (${requirement.origin}) would replace ${baseName}'s ${kept.name}${kept.version ? ` ${kept.version}` : ""} with a build from ${requirement.url}; left out (${kept.why})`,
      });
    } else if (reportUnknown && kept.version === null && requirement.specifier !== "") {
      conflicts.push({
        requirement,
        provided,
        message: `${requirement.raw} (${requirement.origin}): left out; ${baseName}'s own ${kept.name} is kept (${kept.why}; its version is not in the knowledge base and the build pins it as installed), so a pinned ${kept.name} from PyPI cannot replace it`,
      });
    } else if (kept.version !== null && satisfies(kept.version, requirement.specifier) === false) {
      conflicts.push({
        requirement,
        provided,
        message: `${requirement.raw} (${requirement.origin}) does not accept ${baseName}'s ${kept.name} ${kept.version}; left out, the base's ${kept.name} is kept (relax the pin to accept ${kept.version})`,
      });
    }
  }
  return { install, conflicts };
}
