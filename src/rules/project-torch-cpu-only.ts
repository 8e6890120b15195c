/**
 * Before anything is installed: on a machine with an NVIDIA GPU, the project's manifests select a
 * CPU-only torch (a +cpu pin or the cpu index, PyPI's aarch64 wheel before 2.11, conda-forge's CPU
 * build when pixi solves without __cuda, pytorch-cpu / cpuonly).
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { deviceCapabilities, hostHasNvidiaGpu } from "../rule-helpers/view.js";
import { predictTorchInstalls } from "../project/install-prediction.js";
import { installFix } from "../rule-helpers/install-fix.js";

export const projectTorchCpuOnly: Rule = {
  id: "project-torch-cpu-only",
  title: "Installing the project would give a CPU-only torch",
  severity: "error",
  check(facts, kb) {
    if (!hostHasNvidiaGpu(facts)) return [];
    const device = deviceCapabilities(facts)[0];
    const findings: Finding[] = [];
    for (const prediction of predictTorchInstalls(facts, kb)) {
      if (prediction.builds.length === 0 || prediction.builds.some((build) => build.cuda !== null)) continue;
      const build = prediction.builds[0]!;
      const why = prediction.fromPypi
        ? `PyPI's torch ${build.torch} wheel for ${facts.host.cpuArch} is the CPU-only build` +
          (facts.host.cpuArch === "aarch64"
            ? " (CUDA wheels reach PyPI for aarch64 from torch 2.11; before that they are only on download.pytorch.org)"
            : "")
        : prediction.variant === "cpu"
          ? `the manifest routes torch to PyTorch's CPU-only build (${prediction.how || prediction.exactVersion})`
          : prediction.how;
      findings.push(
        makeFinding(this, {
          message: `${prediction.command} would install ${build.label} on a machine with an NVIDIA GPU: ${why}. torch.cuda.is_available() would be False.`,
          evidence: [
            ev("install", `${prediction.command} (${prediction.manifest})`),
            ...prediction.lines.map((line) => ev(line.origin, line.text)),
            ...(prediction.how ? [ev("how", prediction.how)] : []),
            ev("CPU architecture", facts.host.cpuArch),
            ev("NVIDIA driver", facts.host.nvidia.driverVersion),
          ],
          fix: device
            ? installFix(facts, kb, prediction, device.cc)
            : {
                summary: "Route torch to a CUDA build for this machine (gpuprep kb resolve names it).",
                commands: [],
              },
        }),
      );
    }
    return findings;
  },
};
