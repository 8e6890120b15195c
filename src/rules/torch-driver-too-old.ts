/** The NVIDIA driver against the CUDA version torch was built for, with minor-version compatibility. */
import { smiDriver } from "../facts/driver.js";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { torchBuildAdvice } from "../rule-helpers/torch-build-advice.js";

export const torchDriverTooOld: Rule = {
  id: "torch-driver-too-old",
  title: "NVIDIA driver too old for torch's CUDA",
  severity: "error",
  check(facts, kb) {
    const torch = facts.python.torch;
    const driver = facts.host.nvidia.driverVersion;
    const value = smiDriver(facts.host.nvidia);
    if (!torch?.cudaVersion || !driver || !value) return [];
    const result = kb.driverSupportFor(value, torch.cudaVersion);
    if (!result || result.support === "native") return [];
    const { support, toolkit } = result;
    const evidence = [
      ev("torch", `${torch.version} (CUDA ${torch.cudaVersion})`),
      ev("driver", driver),
      ev("driver supports CUDA up to (nvidia-smi)", facts.host.nvidia.cudaVersion),
      ev(`CUDA ${toolkit.version} GA driver`, toolkit.minDriverLinux),
      ev(`CUDA ${toolkit.version} minor-version-compatibility floor`, toolkit.minorCompatMinDriverLinux),
    ];
    const advice = torchBuildAdvice(facts, kb, null);
    const driverUpgrade = `Upgrade the NVIDIA driver to ${toolkit.minDriverLinux} or newer`;
    if (support === "minor-compat") {
      return [
        makeFinding(this, {
          severity: "warning",
          message:
            `Driver ${driver} is older than CUDA ${toolkit.version}'s own driver (${toolkit.minDriverLinux}); torch runs under ` +
            `minor-version compatibility, but PTX newer than the driver cannot be JIT-compiled ` +
            `(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) and some newer runtime features are unavailable.`,
          evidence,
          fix: { summary: `${driverUpgrade}, or: ${advice.summary}`, commands: advice.commands },
        }),
      ];
    }
    return [
      makeFinding(this, {
        message:
          `torch ${torch.version} needs a driver for CUDA ${toolkit.version} (>= ${toolkit.minorCompatMinDriverLinux ?? toolkit.minDriverLinux}); ` +
          `driver ${driver} is older, so CUDA initialisation fails ("The NVIDIA driver on your system is too old").`,
        evidence,
        fix: { summary: `${driverUpgrade}, or: ${advice.summary}`, commands: advice.commands },
      }),
    ];
  },
};
