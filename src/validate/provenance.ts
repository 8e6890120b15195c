/**
 * Kernel provenance: the backend a kernel's name means. The names are the ones torch.profiler
 * (CUPTI) reports; the rules below were read off real captures (docs/reports/validate-h100.json)
 * and the libraries' own naming:
 *
 * - SDPA flash: torch's FlashAttention-2 kernels, `pytorch_flash::flash_fwd_kernel<...>`.
 * - SDPA cuDNN: cuDNN's fused attention engines, `cudnn_generated_fort_native_sdpa_sm90_...`
 *   (checked before flash: their names may contain "flash" too).
 * - SDPA efficient: the memory-efficient (xFormers CUTLASS) kernels, `fmha_cutlassF_...` with
 *   `PyTorchMemEffAttention::AttentionKernel`.
 * - SDPA math: no fused attention kernel, a softmax kernel between two GEMMs.
 * - cuBLASLt: `nvjet_*` kernels (cuBLASLt's Hopper / Blackwell GEMMs) and names that say cublasLt.
 * - cuBLAS: names that say cublas (`sm90_xmma_gemm_..._cublas`), and the generic GEMM names of
 *   cuBLAS's own kernels (`ampere_bf16_s16816gemm_...`, `sm80_xmma_gemm_...`, `gemv2T_kernel`).
 * - CUTLASS: `cutlass` in the name and neither of the above (torch's own CUTLASS kernels, e.g. its
 *   rowwise FP8 GEMM, or a library's).
 * cuBLAS routes many GEMMs through cuBLASLt's kernels, so a torch.matmul may show cuBLASLt.
 */
import type { KernelOp } from "./payload.js";
import type { Provenance } from "./report.js";

type KernelList = { kernels?: Array<{ name: string; us: number }> | undefined; error?: string | null };

const CUDNN_ATTENTION = /cudnn|fort_native_sdpa|sdpa_sm\d+/i;
const FLASH_ATTENTION = /flash_fwd|flash_bwd|pytorch_flash|flash_attention/i;
const EFFICIENT_ATTENTION = /fmha_cutlass|AttentionKernel|mem_?eff|efficient_attention/i;
const SOFTMAX = /softmax/i;

/** The SDPA backend a list of kernels means (CPU mode: the aten operator that ran). */
export function attentionBackend(names: string[]): string {
  if (names.some((n) => CUDNN_ATTENTION.test(n) && !/gemm/i.test(n))) return "cudnn";
  if (names.some((n) => FLASH_ATTENTION.test(n))) return "flash";
  if (names.some((n) => EFFICIENT_ATTENTION.test(n))) return "efficient";
  if (names.some((n) => SOFTMAX.test(n))) return "math";
  return names.length === 0 ? "none" : "unknown";
}

/** The GEMM library one kernel's name means, or null when it is no GEMM. */
export function gemmLibrary(name: string): string | null {
  if (/nvjet|cublasLt/i.test(name)) return "cuBLASLt";
  if (/cublas/i.test(name)) return "cuBLAS";
  if (/cutlass/i.test(name)) return "CUTLASS";
  if (
    /xmma_gemm|s16816gemm|s1688gemm|h16816gemm|i16832gemm|i8816gemm|imma|sgemm|hgemm|gemv|gemmSN|gemmk1/i.test(
      name,
    )
  )
    return "cuBLAS";
  if (/^aten::(mm|addmm|bmm|_int_mm|_scaled_mm)$/.test(name)) return "cpu";
  return null;
}

/** The library of the busiest GEMM kernel of an operation. */
function gemmBackend(names: string[]): string {
  for (const name of names) {
    const library = gemmLibrary(name);
    if (library) return library;
  }
  return names.length === 0 ? "none" : "unknown";
}

/** Kernel names busiest first (the payload sorts them by time). */
function names(list: KernelList): string[] {
  return (list.kernels ?? []).map((k) => k.name).filter((n) => !/^Memcpy|^Memset/.test(n));
}

export function provenanceOf(op: KernelOp): Provenance {
  const kernelNames = names(op);
  if (op.error) return { backend: "unknown", kernels: [`profiler: ${op.error}`] };
  const backend = op.op === "sdpa" ? attentionBackend(kernelNames) : gemmBackend(kernelNames);
  return { backend, kernels: kernelNames.slice(0, 5) };
}

/** The attention backend a whole training step used (its kernel list holds everything else too). */
export function stepAttention(list: KernelList): Provenance {
  const kernelNames = names(list);
  const attention = kernelNames.filter(
    (n) =>
      CUDNN_ATTENTION.test(n) || FLASH_ATTENTION.test(n) || EFFICIENT_ATTENTION.test(n) || SOFTMAX.test(n),
  );
  return { backend: attentionBackend(attention), kernels: attention.slice(0, 5) };
}

/** The step's busiest GEMM kernel library. */
export function stepGemm(list: KernelList): Provenance {
  const gemms = names(list).filter((n) => gemmLibrary(n) !== null);
  return { backend: gemmBackend(gemms), kernels: gemms.slice(0, 3) };
}
