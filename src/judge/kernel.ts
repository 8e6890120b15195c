/**
 * The shared torch child's kernel check (src/probe/torch_env.py: an elementwise kernel and a
 * 512x512 matmul on device 0, against the CPU), judged once for doctor (rule
 * torch-kernel-launch-failed) and validate (check.kernel): the most direct proof that torch
 * cannot compute on this GPU, and the cause read from its error.
 */
import type { Judgment } from "./vocabulary.js";

export const TORCH_KERNEL_LAUNCH_FAILED = {
  id: "torch-kernel-launch-failed",
  title: "A CUDA kernel launch through torch failed",
  severity: "error",
} as const;

interface KernelInput {
  /** ran: the GPU work was attempted (false without a device). */
  kernel: { ran: boolean; ok: boolean; relError?: number | null; error?: string | null } | null;
}

interface KernelJudgment extends Judgment {
  /** The stable id of the cause (Finding.cause), when it failed. */
  cause: string | null;
}

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

export function judgeKernel(input: KernelInput): KernelJudgment {
  const { id } = TORCH_KERNEL_LAUNCH_FAILED;
  const kernel = input.kernel;
  if (!kernel || !kernel.ran) return { id, verdict: "skip", message: "no GPU visible to torch", cause: null };
  if (kernel.ok) {
    const rel = kernel.relError;
    const figure =
      rel === null || rel === undefined ? "" : `: 512^2 matmul rel. error ${rel.toExponential(1)} vs float64`;
    return { id, verdict: "pass", message: `kernels on cuda:0 give the CPU's results${figure}`, cause: null };
  }
  const error = kernel.error ?? "wrong result";
  const cause = kernelErrorCause(error);
  return {
    id,
    verdict: TORCH_KERNEL_LAUNCH_FAILED.severity,
    message: `A CUDA kernel on cuda:0 failed: ${error.split("\n")[0]}. Cause: ${cause.text}.`,
    cause: cause.id,
  };
}
