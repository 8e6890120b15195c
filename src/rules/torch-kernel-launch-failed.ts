/** The probe's tiny kernel on device 0 failed: the most direct proof that torch cannot compute on this GPU. */
import type { Rule } from "./types.js";
import { ev, makeFinding } from "./finding.js";
import { torchLive } from "./view.js";

/** What an error text says about its cause, for the message. */
function kernelErrorCause(error: string): string {
  if (/no kernel image is available/i.test(error))
    return "torch has no code for this GPU's architecture (see torch-arch-not-covered)";
  if (/out of memory/i.test(error)) return "the GPU is out of memory (another process holds it?)";
  if (/busy or unavailable|exclusive/i.test(error))
    return "the GPU is in exclusive-process mode and in use by another process";
  if (/unsupported ptx|PTX JIT/i.test(error)) return "the driver is too old to JIT-compile torch's PTX";
  if (/Unrecognized CachingAllocator option|PYTORCH_CUDA_ALLOC_CONF/i.test(error))
    return "PYTORCH_CUDA_ALLOC_CONF is invalid";
  return "see the error text";
}

export const torchKernelLaunchFailed: Rule = {
  id: "torch-kernel-launch-failed",
  title: "A CUDA kernel launch through torch failed",
  severity: "error",
  check(facts) {
    const live = torchLive(facts);
    if (!live || !live.kernel.ran || live.kernel.ok) return [];
    const error = live.kernel.error ?? "wrong result";
    return [
      makeFinding(this, {
        message: `A tiny elementwise kernel on cuda:0 failed: ${error.split("\n")[0]}. Cause: ${kernelErrorCause(error)}.`,
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
      }),
    ];
  },
};
