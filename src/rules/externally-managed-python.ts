/** A system Python marked EXTERNALLY-MANAGED (PEP 668): pip install into it is refused. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

export const externallyManagedPython: Rule = {
  id: "externally-managed-python",
  title: "The interpreter is an externally managed system Python",
  severity: "info",
  check(facts) {
    const interp = facts.python.interpreter;
    if (!interp.externallyManaged || interp.prefix !== interp.basePrefix) return [];
    return [
      makeFinding(this, {
        message: `${interp.executable} belongs to the OS package manager (PEP 668): \`pip install\` stops with "error: externally-managed-environment", and its packages follow the distribution's releases, not PyTorch's.`,
        evidence: [
          ev("interpreter", `${interp.executable} ${interp.version} (${interp.kind})`),
          ev("EXTERNALLY-MANAGED", "present"),
        ],
        fix: {
          summary: "Install torch into a virtual environment instead of the system Python.",
          commands: [
            "python3 -m venv ~/.venvs/torch   # or: uv venv",
            "~/.venvs/torch/bin/python -m pip install torch",
          ],
        },
      }),
    ];
  },
};
