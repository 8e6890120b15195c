/**
 * gpuprep-constraints.txt: pins applied to every install. In a container the exact pins come from
 * the image itself at build time (its `pip list`), so this file names what the KB says the image
 * ships and holds the user's own pins; natively it keeps torch on the chosen release.
 */
import type { Plan } from "../plan/types.js";
import { header } from "./paths.js";
import { wrapProse } from "../util/wrap.js";
import { singleLine } from "./quote.js";

export function renderConstraints(plan: Plan): string {
  const lines = [header(plan, "#").trimEnd()];
  if (plan.strategy === "container") {
    lines.push(`# ${plan.container.ref} ships these (knowledge base). They are pinned at build time from`);
    lines.push(
      "# `pip list` inside the image (the Dockerfile's base-packages.txt): the exact versions pip sees, local",
    );
    lines.push(
      "# tags included, which the sources do not always spell the same way. Add your own pins below.",
    );
    const rebuilt = new Set(plan.sourceBuilds.map((b) => b.name.toLowerCase()));
    for (const pkg of plan.container.protected) {
      if (pkg.version === null) continue;
      lines.push(
        `#   ${pkg.name} ${pkg.version}${rebuilt.has(pkg.name) ? " (rebuilt from source here, so not pinned)" : ""}`,
      );
    }
  } else {
    const build = plan.native.build;
    lines.push(
      `# torch ${build.torch} from ${build.indexUrl} runs natively on this GPU; keep it while the project installs.`,
    );
    lines.push(`torch==${build.torch}.*`);
  }
  return lines.join("\n") + "\n";
}

/** gpuprep-requirements.txt: the project's requirements minus what the base provides and what is built from source. */
export function renderRequirements(plan: Plan): string {
  const lines = [header(plan, "#").trimEnd()];
  lines.push(
    "# The project's requirements, installed into the image's Python under gpuprep-constraints.txt.",
  );
  for (const conflict of plan.conflicts)
    lines.push(
      ...wrapProse(`left out: ${singleLine(conflict.message)}`).map(
        (line, i) => `#${i === 0 ? " " : "   "}${line}`,
      ),
    );
  for (const build of plan.sourceBuilds)
    lines.push(`# built from source in the Dockerfile: ${singleLine(build.requirement)}`);
  for (const requirement of plan.install) lines.push(requirement.raw.trim());
  if (plan.options.jupyter && !plan.install.some((r) => r.normalizedName === "jupyterlab"))
    lines.push("jupyterlab  # for the jupyter service (--jupyter)");
  return lines.join("\n") + "\n";
}
