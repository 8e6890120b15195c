/** Packages in the user site (~/.local) leak into this interpreter and can shadow its own. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

export const userSiteLeak: Rule = {
  id: "user-site-leak",
  title: "User site-packages leak into this environment",
  severity: "warning",
  check(facts) {
    const interp = facts.python.interpreter;
    if (!interp.userSiteEnabled || !interp.userSite) return [];
    const inUserSite = facts.python.distributions.filter((d) => d.location === interp.userSite);
    if (inUserSite.length === 0) return [];
    const critical = inUserSite.filter((d) => ["torch", "numpy", "triton"].includes(d.normalizedName));
    return [
      makeFinding(this, {
        severity: critical.length > 0 ? "warning" : "info",
        message:
          `${inUserSite.length} package(s) from the user site ${interp.userSite} are importable in this ${interp.kind} interpreter` +
          (critical.length > 0
            ? `, including ${critical.map((d) => `${d.name} ${d.version}`).join(", ")}`
            : "") +
          "; they were installed with pip --user and apply to every Python of this version.",
        evidence: [
          ev("interpreter", `${interp.executable} (${interp.kind})`),
          ev("user site", interp.userSite),
          ev("packages there", inUserSite.map((d) => `${d.name} ${d.version}`).join(", ")),
        ],
        fix: {
          summary: "Ignore the user site for this environment, or remove those packages from it.",
          commands: [
            "export PYTHONNOUSERSITE=1",
            `${interp.executable} -m pip uninstall -y ${inUserSite.map((d) => d.name).join(" ")}   # with PYTHONNOUSERSITE unset, removes the user copies`,
          ],
        },
      }),
    ];
  },
};
