/** A CUDA build of torch on a GPU machine, yet torch.cuda.is_available() is False. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { describeGpus, envVar, smiGpus, torchLive } from "../rule-helpers/view.js";

export const torchCudaUnavailable: Rule = {
  id: "torch-cuda-unavailable",
  title: "torch cannot use the GPU",
  severity: "error",
  check(facts) {
    const live = torchLive(facts);
    if (!live || live.cudaBuilt === null || live.cudaAvailable) return [];
    if (smiGpus(facts).length === 0) return [];
    const visible = envVar(facts, "CUDA_VISIBLE_DEVICES");
    const hint =
      visible !== undefined ? ` (CUDA_VISIBLE_DEVICES=${JSON.stringify(visible)} may hide the GPUs)` : "";
    return [
      makeFinding(this, {
        cause: "cuda-unavailable",
        subject: "torch",
        message: `torch ${live.version} (CUDA ${live.cudaBuilt}) sees no usable GPU although nvidia-smi lists ${smiGpus(facts).length}${hint}: ${live.cudaInitError ?? "torch.cuda.is_available() is False"}.`,
        evidence: [
          ev("torch.cuda.is_available()", live.cudaAvailable),
          ev("CUDA init error", live.cudaInitError),
          ev("NVIDIA GPUs", describeGpus(facts)),
          ev("driver", facts.host.nvidia.driverVersion),
          ev("CUDA_VISIBLE_DEVICES", visible ?? "(unset)"),
        ],
        fix: {
          summary:
            "Read the CUDA init error above; the usual causes are a driver older than torch's CUDA, hidden devices, or a container without GPU access.",
          commands: [
            `${facts.python.interpreter.executable} -c "import torch; torch.cuda.init()"`,
            "nvidia-smi",
          ],
        },
      }),
    ];
  },
};
