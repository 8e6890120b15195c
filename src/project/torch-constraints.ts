/**
 * What the project's requirements say torch must be: its own pin (public part), and the torch a
 * companion pin belongs to where the KB knows the pair (torchvision 0.24.1 is built for torch
 * 2.9.1 and loads only with it). doctor's environment fix and init's plan honour the same.
 */
import type { Requirement } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { torchPin } from "./torch-pin.js";

interface TorchConstraint {
  /** A PEP 440 specifier on torch ("==2.7.1", ">=2.7"). */
  specifier: string;
  /** The requirement that says so, as written ("torchvision==0.24.1 (requirements.txt:2)"). */
  from: string;
}

const COMPANIONS = new Set(["torchvision", "torchaudio"]);

/** The version an exact pin names ("==0.24.1" -> "0.24.1"); null for anything else. */
function exactVersion(specifier: string): string | null {
  return /^\s*===?\s*([0-9][0-9a-z.+!]*)\s*$/i.exec(specifier)?.[1] ?? null;
}

export function torchConstraints(requirements: Requirement[], kb: KnowledgeBase): TorchConstraint[] {
  const out: TorchConstraint[] = [];
  for (const requirement of requirements) {
    if (requirement.normalizedName === "torch") {
      const pin = torchPin(requirement).publicSpecifier;
      if (pin) out.push({ specifier: pin, from: `${requirement.raw} (${requirement.origin})` });
      continue;
    }
    if (!COMPANIONS.has(requirement.normalizedName)) continue;
    const version = exactVersion(requirement.specifier);
    const torch = version ? kb.packageRequirements(requirement.normalizedName, version).torch : null;
    if (torch) out.push({ specifier: torch, from: `${requirement.raw} (${requirement.origin})` });
  }
  return out;
}
