/** uv run / uv sync re-syncs the venv to the project, replacing a torch that came from elsewhere. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { isUvProject, lockedTorch, torchFamilyRequirements } from "../project/project-view.js";
import { envVar, ngcMarker } from "../rule-helpers/view.js";

export const uvSyncReplacesTorch: Rule = {
  id: "uv-sync-replaces-torch",
  title: "uv sync would replace the container's torch",
  severity: "warning",
  check(facts) {
    const marker = ngcMarker(facts);
    if (!marker || !facts.project || !isUvProject(facts)) return [];
    const torchReqs = torchFamilyRequirements(facts);
    const locked = lockedTorch(facts);
    if (torchReqs.length === 0 && locked === null) return [];
    const noSync = envVar(facts, "UV_NO_SYNC");
    if (noSync !== undefined && !["", "0", "false"].includes(noSync.toLowerCase())) return [];
    const overrides = facts.project.pyproject?.uv.overrideDependencies ?? [];
    const constraints = facts.project.pyproject?.uv.constraintDependencies ?? [];
    const torchOverridden = [...overrides, ...constraints].some((r) => r.normalizedName === "torch");
    return [
      makeFinding(this, {
        message:
          `This is an NGC container (${marker.name}=${marker.value}) and the project is managed by uv with ` +
          `${torchReqs.map((r) => r.raw).join(", ") || `torch ${locked} in uv.lock`}; UV_NO_SYNC is not set, so the first ` +
          "`uv run` syncs the environment and installs torch from PyPI in place of the image's build.",
        evidence: [
          ev(marker.name, marker.value),
          ev("UV_NO_SYNC", noSync ?? "(unset)"),
          ev("uv.lock torch", locked),
          ev("torch in [tool.uv] override/constraint-dependencies", torchOverridden ? "yes" : "no"),
          ...torchReqs.map((r) => ev(r.origin, r.raw)),
        ],
        fix: {
          summary:
            "Stop uv from syncing torch in the container: set UV_NO_SYNC, and make the venv see the image's packages; or keep torch out of what uv resolves.",
          commands: [
            "export UV_NO_SYNC=1   # or ENV UV_NO_SYNC=1 in the Dockerfile",
            "uv venv --system-site-packages",
            "# and keep torch out of [project].dependencies for the container build (e.g. an optional extra used only for native installs)",
          ],
        },
      }),
    ];
  },
};
