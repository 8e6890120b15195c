/**
 * A GPU against torch.cuda.get_arch_list(), judged once for doctor (rule torch-arch-not-covered)
 * and validate (check.arch), with the real CUDA rules of kb/compat.ts: SASS runs on the same
 * major with an equal or higher minor, 'a' code only on its exact capability, PTX is
 * JIT-compiled for newer GPUs at a first-run cost.
 */
import {
  coverageFor,
  formatComputeCapability,
  smName,
  type ComputeCapability,
  type CoverageVerdict,
} from "../kb/compat.js";
import type { Judgment } from "./vocabulary.js";

export const TORCH_ARCH_NOT_COVERED = {
  id: "torch-arch-not-covered",
  title: "torch has no kernels compiled for this GPU",
  severity: "error",
} as const;

interface TorchArchInput {
  torchVersion: string;
  /** torch.cuda.get_arch_list(). */
  archList: string[];
  gpu: { name: string; cc: ComputeCapability };
  /** The knowledge base's architecture name for the capability ("Hopper"), when it has one. */
  architecture?: string | null;
}

interface TorchArchJudgment extends Judgment {
  /** How the GPU runs torch's code, when torch's arch list could be judged at all. */
  coverage: CoverageVerdict | null;
}

export function judgeTorchArch(input: TorchArchInput): TorchArchJudgment {
  const { id } = TORCH_ARCH_NOT_COVERED;
  const { torchVersion, archList } = input;
  const cc = input.gpu.cc;
  // A CPU-only torch, or one whose CUDA did not initialise, reports no arch list: nothing to judge.
  if (archList.length === 0)
    return { id, verdict: "skip", message: "torch.cuda.get_arch_list() is empty", coverage: null };
  const coverage = coverageFor(archList, cc);
  const ccText = formatComputeCapability(cc);
  const list = archList.join(" ");
  if (coverage.how === "sass")
    return {
      id,
      verdict: "pass",
      message: `SASS via ${coverage.via.join(", ")} (arch list: ${list})`,
      coverage,
    };
  const gpu = `${input.gpu.name} (compute capability ${ccText}${input.architecture ? `, ${input.architecture}` : ""})`;
  if (coverage.how === "ptx-jit")
    return {
      id,
      verdict: "warning",
      message:
        `torch ${torchVersion} has no ${smName(cc)} kernels for ${gpu}; it runs only by JIT-compiling ` +
        `${coverage.via[0]} PTX in the driver, which costs minutes on first use of each kernel and ` +
        `can be slower than native code.`,
      coverage,
    };
  return {
    id,
    verdict: TORCH_ARCH_NOT_COVERED.severity,
    message:
      `torch ${torchVersion} was compiled for ${archList.join(", ")}, none of which can run on ${gpu}: ` +
      `CUDA kernels fail with "no kernel image is available for execution on the device".`,
    coverage,
  };
}
