/** Inside an NGC PyTorch container, a venv (or a pip install) hides the image's own tuned torch. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { ngcMarker } from "../rule-helpers/view.js";

export const ngcTorchHidden: Rule = {
  id: "ngc-torch-hidden",
  title: "The NGC container's torch is hidden",
  severity: "error",
  check(facts) {
    const marker = ngcMarker(facts);
    if (!marker) return [];
    const interp = facts.python.interpreter;
    const torch = facts.python.torch;
    // NGC images install torch into the system interpreter's dist-packages.
    const fromImage = torch !== null && torch.location.includes("/dist-packages");
    if (fromImage) return [];
    const inVenv = interp.prefix !== interp.basePrefix;
    const evidence = [
      ev(marker.name, marker.value),
      ev("interpreter", `${interp.executable} (${interp.kind})`),
      ev("sys.prefix / base prefix", `${interp.prefix} / ${interp.basePrefix}`),
      ev("torch", torch ? `${torch.version} at ${torch.location}` : "not importable"),
    ];
    const message = torch
      ? `This is an NGC PyTorch container (${marker.name}=${marker.value}), but torch ${torch.version} comes from ${torch.location}, not the image's dist-packages: the image's torch, built for its CUDA and GPUs, is hidden.`
      : `This is an NGC PyTorch container (${marker.name}=${marker.value}), but ${interp.executable} cannot see the image's torch${inVenv ? ": the venv was made without --system-site-packages" : ""}.`;
    return [
      makeFinding(this, {
        message,
        evidence,
        fix: {
          summary: inVenv
            ? "Recreate the venv on top of the image's packages, and keep pip from replacing torch."
            : "Uninstall the torch that replaced the image's one, and keep pip from replacing it again.",
          commands: inVenv
            ? [
                `rm -rf ${interp.prefix}`,
                `python -m venv --system-site-packages ${interp.prefix}`,
                `${interp.prefix}/bin/python -c "import torch; print(torch.__file__)"   # must be under /usr/local/lib/python3*/dist-packages`,
              ]
            : [
                `${interp.executable} -m pip uninstall -y torch`,
                `${interp.executable} -c "import torch; print(torch.__version__, torch.__file__)"`,
              ],
        },
      }),
    ];
  },
};
