/**
 * No torch in the environment: say so, since every torch rule is then silent, and give the one
 * install for this GPU, driver, CPU and Python (pip, uv, a container) from the `kb resolve` resolver.
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { hostHasNvidiaGpu, pythonCmd } from "../rule-helpers/view.js";
import { torchInstallAdvice } from "../rule-helpers/torch-build-advice.js";

export const torchNotInstalled: Rule = {
  id: "torch-not-installed",
  title: "torch is not installed in this environment",
  severity: "info",
  check(facts, kb) {
    if (facts.python.torch !== null) return [];
    if (facts.python.distributions.some((d) => d.normalizedName === "torch")) return [];
    const python = pythonCmd(facts);
    const evidence = [
      ev(
        "python",
        `${facts.python.interpreter.executable} (${facts.python.interpreter.version}, ${facts.python.interpreter.kind})`,
      ),
      ev("distributions installed", facts.python.distributions.length),
    ];
    const message = `${facts.python.interpreter.executable} has no torch installed; the torch checks were skipped.`;
    const advice = hostHasNvidiaGpu(facts) ? torchInstallAdvice(facts, kb) : null;
    if (advice) {
      evidence.push(ev("best build here (gpuprep kb resolve)", advice.build));
      if (advice.image) evidence.push(ev("NGC image that runs here", advice.image));
      return [
        makeFinding(this, {
          message,
          evidence,
          fix: {
            summary: `Point gpuprep at the environment that has torch (--python PATH), or install it for this GPU. ${advice.summary}`,
            commands: [...advice.commands, "gpuprep doctor --python /path/to/venv/bin/python"],
          },
        }),
      ];
    }
    return [
      makeFinding(this, {
        message,
        evidence,
        fix: {
          summary: hostHasNvidiaGpu(facts)
            ? "Point gpuprep at the environment that has torch (--python PATH), or install a CUDA build of torch (gpuprep kb resolve names the build for a GPU and driver)."
            : "Point gpuprep at the environment that has torch (--python PATH), if there is one; on this machine, which has no NVIDIA GPU, PyPI's torch is fine.",
          commands: [`gpuprep doctor --python /path/to/venv/bin/python`, `${python} -m pip install torch`],
        },
      }),
    ];
  },
};
