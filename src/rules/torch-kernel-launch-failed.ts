/** The probe's tiny kernel on device 0 failed: the most direct proof that torch cannot compute on this GPU. */
import type { Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { torchLive } from "../rule-helpers/view.js";

/** What an error text says about its cause: a stable id (Finding.cause) and words for the message. */
function kernelErrorCause(error: string): { id: string; text: string } {
  if (/no kernel image is available/i.test(error))
    // The cause torch-arch-not-covered names from the arch list: merged into it when both fire.
    return {
      id: "arch-missing",
      text: "torch has no code for this GPU's architecture (see torch-arch-not-covered)",
    };
  if (/out of memory/i.test(error))
    return { id: "out-of-memory", text: "the GPU is out of memory (another process holds it?)" };
  if (/busy or unavailable|exclusive/i.test(error))
    return { id: "gpu-busy", text: "the GPU is in exclusive-process mode and in use by another process" };
  if (/unsupported ptx|PTX JIT/i.test(error))
    return { id: "ptx-too-new", text: "the driver is too old to JIT-compile torch's PTX" };
  if (/Unrecognized CachingAllocator option|PYTORCH_CUDA_ALLOC_CONF/i.test(error))
    return { id: "alloc-conf-invalid", text: "PYTORCH_CUDA_ALLOC_CONF is invalid" };
  return { id: "kernel-error", text: "see the error text" };
}

export const torchKernelLaunchFailed: Rule = {
  id: "torch-kernel-launch-failed",
  title: "A CUDA kernel launch through torch failed",
  severity: "error",
  check(facts) {
    const live = torchLive(facts);
    if (!live || !live.kernel.ran || live.kernel.ok) return [];
    const error = live.kernel.error ?? "wrong result";
    const cause = kernelErrorCause(error);
    return [
      makeFinding(this, {
        message: `A tiny elementwise kernel on cuda:0 failed: ${error.split("\n")[0]}. Cause: ${cause.text}.`,
        evidence: [
          ev("torch", `${live.version} (CUDA ${live.cudaBuilt ?? "none"})`),
          ev(
            "device 0",
            live.devices[0] ? `${live.devices[0].name} ${live.devices[0].capability.join(".")}` : null,
          ),
          ev("kernel error", error),
        ],
        fix: {
          summary: "Reproduce it with the one-liner below and fix the cause named above.",
          commands: [
            `CUDA_LAUNCH_BLOCKING=1 ${facts.python.interpreter.executable} -c "import torch; print((torch.ones(4, device='cuda') * 2).sum().item())"`,
          ],
        },
        cause: cause.id,
        subject: "torch",
      }),
    ];
  },
};
