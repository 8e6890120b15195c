/** The project's torch pins are not met by the installed torch: installing the project replaces it. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { satisfies } from "../util/pep440.js";
import { lockedTorch, projectTorchRequirements } from "../project/project-view.js";
import { ngcMarker } from "../rule-helpers/view.js";

export const projectTorchPinMismatch: Rule = {
  id: "project-torch-pin-mismatch",
  title: "The project's torch pin does not match the installed torch",
  severity: "warning",
  check(facts) {
    const torch = facts.python.torch;
    if (!torch || !facts.project) return [];
    const unmet = projectTorchRequirements(facts).filter(
      (r) => r.url === null && satisfies(torch.version, r.specifier) === false,
    );
    const locked = lockedTorch(facts);
    const lockDiffers = locked !== null && satisfies(torch.version, `==${locked}`) === false;
    if (unmet.length === 0 && !lockDiffers) return [];
    const marker = ngcMarker(facts);
    const evidence = [
      ev("installed torch", `${torch.version} (CUDA ${torch.cudaVersion ?? "none"}) at ${torch.location}`),
      ...unmet.map((r) => ev(r.origin, r.raw)),
    ];
    if (lockDiffers) evidence.push(ev(facts.project.uvLock?.path ?? "uv.lock", `torch ${locked}`));
    if (marker) evidence.push(ev(marker.name, marker.value));
    const wanted = [...unmet.map((r) => r.raw), ...(lockDiffers ? [`torch==${locked} (uv.lock)`] : [])].join(
      ", ",
    );
    return [
      makeFinding(this, {
        severity: marker ? "error" : "warning",
        message:
          `The project asks for ${wanted}, but torch ${torch.version} is installed: pip install -r / uv sync would ` +
          `download and replace it${marker ? ", discarding the NGC container's torch" : ""} (often with a build for another CUDA).`,
        evidence,
        fix: {
          summary: marker
            ? "Loosen the project's torch pin so the container's torch satisfies it (or drop torch from the project's dependencies inside the container)."
            : "Either change the pin to the torch you have, or install the pinned one deliberately from the right CUDA index.",
          commands: [
            `# in ${unmet[0]?.origin.split(":")[0] ?? "pyproject.toml"}: replace ${unmet[0]?.raw ?? `torch==${locked}`} with torch>=${torch.version.split("+")[0]?.split("a")[0]}`,
          ],
        },
      }),
    ];
  },
};
