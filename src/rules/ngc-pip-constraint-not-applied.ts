/** NGC images pin their torch through a pip constraint file; when it is not applied pip may replace torch. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { satisfies } from "../util/pep440.js";
import { envVar, ngcMarker } from "../rule-helpers/view.js";

export const ngcPipConstraintNotApplied: Rule = {
  id: "ngc-pip-constraint-not-applied",
  title: "The NGC image's pip constraints are not applied",
  severity: "warning",
  check(facts) {
    const marker = ngcMarker(facts);
    if (!marker) return [];
    const files = facts.python.constraintFiles;
    const torchPins = files.flatMap((f) =>
      f.pins.filter((p) => p.normalizedName === "torch").map((p) => ({ file: f, pin: p })),
    );
    if (torchPins.length === 0) return [];
    const torch = facts.python.torch;
    const violated = torch ? torchPins.filter(({ pin }) => satisfies(torch.version, pin.spec) === false) : [];
    const pipConstraint = envVar(facts, "PIP_CONSTRAINT");
    const applied =
      pipConstraint !== undefined &&
      pipConstraint !== "" &&
      files.some((f) => pipConstraint.split(/\s+/).includes(f.path));
    if (applied && violated.length === 0) return [];
    const first = torchPins[0] as (typeof torchPins)[number];
    const evidence = [
      ev(marker.name, marker.value),
      ev("PIP_CONSTRAINT", pipConstraint ?? "(unset)"),
      ...torchPins.map(({ file, pin }) => ev(`${file.path} (${file.origin})`, pin.raw)),
      ev("installed torch", torch ? `${torch.version} at ${torch.location}` : "(none)"),
    ];
    if (violated.length > 0) {
      return [
        makeFinding(this, {
          severity: "error",
          message: `torch ${torch?.version} violates the image's own constraint ${first.pin.raw} (${first.file.path}): it was replaced after the image was built.`,
          evidence,
          fix: {
            summary:
              "Reinstall the image's torch by rebuilding from the base image; install project packages with the constraint file applied.",
            commands: [
              `pip install -c ${first.file.path} -r requirements.txt`,
              `export PIP_CONSTRAINT=${first.file.path}`,
            ],
          },
        }),
      ];
    }
    return [
      makeFinding(this, {
        message: `The image pins torch in ${first.file.path} (${first.pin.raw}), but PIP_CONSTRAINT does not point at it here, so a pip install of a package that needs another torch replaces the image's build.`,
        evidence,
        fix: {
          summary: "Apply the image's constraint file to every pip install.",
          commands: [
            `export PIP_CONSTRAINT=${first.file.path}`,
            `pip install -c ${first.file.path} <packages>`,
          ],
        },
      }),
    ];
  },
};
