/** No torch in the environment: say so, since every torch rule is then silent. */
import type { Rule } from "./types.js";
import { ev, makeFinding } from "./finding.js";
import { hostHasNvidiaGpu, pythonCmd } from "./view.js";

export const torchNotInstalled: Rule = {
  id: "torch-not-installed",
  title: "torch is not installed in this environment",
  severity: "info",
  check(facts) {
    if (facts.python.torch !== null) return [];
    if (facts.python.distributions.some((d) => d.normalizedName === "torch")) return [];
    const python = pythonCmd(facts);
    return [
      makeFinding(this, {
        message: `${facts.python.interpreter.executable} has no torch installed; the torch checks were skipped.`,
        evidence: [
          ev(
            "python",
            `${facts.python.interpreter.executable} (${facts.python.interpreter.version}, ${facts.python.interpreter.kind})`,
          ),
          ev("distributions installed", facts.python.distributions.length),
        ],
        fix: {
          summary: hostHasNvidiaGpu(facts)
            ? "Point gpuprep at the environment that has torch (--python PATH), or install a CUDA build of torch."
            : "Point gpuprep at the environment that has torch (--python PATH), if there is one.",
          commands: [`gpuprep doctor --python /path/to/venv/bin/python`, `${python} -m pip install torch`],
        },
      }),
    ];
  },
};
