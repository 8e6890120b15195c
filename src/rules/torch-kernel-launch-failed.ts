/** The probe's kernel check on device 0 failed: the most direct proof that torch cannot compute on this GPU. */
import type { Rule } from "../findings/types.js";
import { ev, findingsOf } from "../findings/finding.js";
import { torchLive } from "../rule-helpers/view.js";
import { judgeKernel, TORCH_KERNEL_LAUNCH_FAILED } from "../judge/kernel.js";

export const torchKernelLaunchFailed: Rule = {
  ...TORCH_KERNEL_LAUNCH_FAILED,
  check(facts) {
    const live = torchLive(facts);
    if (!live) return [];
    // Judged with validate's check.kernel in src/judge/kernel.ts: the same verdict and words.
    const judgment = judgeKernel({ kernel: live.kernel });
    return findingsOf(this, judgment, {
      evidence: [
        ev("torch", `${live.version} (CUDA ${live.cudaBuilt ?? "none"})`),
        ev(
          "device 0",
          live.devices[0] ? `${live.devices[0].name} ${live.devices[0].capability.join(".")}` : null,
        ),
        ev("kernel error", live.kernel.error ?? "wrong result"),
      ],
      fix: {
        summary: "Reproduce it with the one-liner below and fix the cause named above.",
        commands: [
          `CUDA_LAUNCH_BLOCKING=1 ${facts.python.interpreter.executable} -c "import torch; print((torch.ones(4, device='cuda') * 2).sum().item())"`,
        ],
      },
      ...(judgment.cause ? { cause: judgment.cause } : {}),
      subject: "torch",
    });
  },
};
