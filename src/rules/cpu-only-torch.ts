/** torch is a CPU-only build; on a machine with an NVIDIA GPU that is an error. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { describeGpus, hostHasNvidiaGpu, torchLive } from "../rule-helpers/view.js";
import { torchBuildAdvice, torchInstallAdvice } from "../rule-helpers/torch-build-advice.js";

export const cpuOnlyTorch: Rule = {
  id: "cpu-only-torch",
  title: "torch is a CPU-only build",
  severity: "error",
  check(facts, kb) {
    const torch = facts.python.torch;
    if (!torch) return [];
    const live = torchLive(facts);
    // The static read is the primary fact; the live one confirms when it ran.
    const cudaBuilt = live ? live.cudaBuilt : torch.cudaVersion;
    if (cudaBuilt !== null) return [];
    const evidence = [
      ev("torch", `${torch.version} at ${torch.location}`),
      ev("torch.version.cuda", "None"),
      ev("CPU architecture", facts.host.cpuArch),
      ev("NVIDIA GPUs", describeGpus(facts)),
    ];
    if (!hostHasNvidiaGpu(facts)) {
      return [
        makeFinding(this, {
          severity: "info",
          message: `torch ${torch.version} is a CPU-only build; fine on this machine, which has no NVIDIA GPU.`,
          evidence,
          fix: {
            summary: "Nothing to do here; on a GPU machine install a CUDA build instead.",
            commands: [],
          },
        }),
      ];
    }
    // The one install for this machine (pip, uv, a container); the generic advice when it cannot be resolved.
    const install = torchInstallAdvice(facts, kb);
    const advice = install
      ? {
          summary: install.summary,
          commands: install.commands.map((c) =>
            c
              .replace(/ -m pip install /, " -m pip install --force-reinstall ")
              .replace(/^uv pip install /, "uv pip install --reinstall-package torch "),
          ),
        }
      : torchBuildAdvice(facts, kb, null);
    const aarch64 =
      facts.host.cpuArch === "aarch64"
        ? " On aarch64 a plain `pip install torch` used to give a CPU-only wheel, so name the CUDA index explicitly."
        : "";
    return [
      makeFinding(this, {
        message:
          `torch ${torch.version} is a CPU-only build but this machine has an NVIDIA GPU: ` +
          `torch.cuda.is_available() is False and .cuda() raises "Torch not compiled with CUDA enabled".${aarch64}`,
        evidence,
        fix: advice,
      }),
    ];
  },
};
