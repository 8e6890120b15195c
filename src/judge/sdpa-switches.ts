/**
 * The process-wide switches of scaled_dot_product_attention's flash and memory-efficient
 * backends, judged once for doctor (rule sdpa-fast-kernels-off) and validate (check.sdpa-backends).
 * With both off, attention falls back to the math kernel; validate's benchmark forces each backend
 * with sdpa_kernel and so does not see a switch turned off at import.
 */
import type { Judgment } from "./vocabulary.js";

export const SDPA_FAST_KERNELS_OFF = {
  id: "sdpa-fast-kernels-off",
  title: "SDPA flash / memory-efficient backends are disabled",
  severity: "warning",
} as const;

interface SdpaSwitchesInput {
  cudaAvailable: boolean;
  /** torch.backends.cuda.*_sdp_enabled(); null where this torch has no such switch (< 2.0) or it failed. */
  flash: boolean | null;
  efficient: boolean | null;
  cudnn: boolean | null;
}

export function judgeSdpaSwitches(input: SdpaSwitchesInput): Judgment {
  const { id } = SDPA_FAST_KERNELS_OFF;
  if (!input.cudaAvailable) return { id, verdict: "skip", message: "no GPU visible to torch" };
  const { flash, efficient, cudnn } = input;
  if (flash === null && efficient === null)
    return { id, verdict: "skip", message: "this torch reports no SDPA backend switches" };
  const off = [flash === false ? "flash" : null, efficient === false ? "mem_efficient" : null].filter(
    (x): x is string => x !== null,
  );
  if (off.length === 0)
    return { id, verdict: "pass", message: "the flash and memory-efficient SDPA backends are enabled" };
  const both = off.length === 2;
  return {
    id,
    verdict: both ? SDPA_FAST_KERNELS_OFF.severity : "info",
    message: both
      ? `torch.nn.functional.scaled_dot_product_attention has its flash and memory-efficient backends disabled${cudnn ? " (only cuDNN and math remain)" : ""}: attention falls back to the math kernel, slower and with memory quadratic in sequence length.`
      : `The SDPA ${off[0]} backend is disabled in this process; attention uses the remaining backends.`,
    fix: {
      summary:
        "Find what disables them at import (sitecustomize, an env-driven library setting) and re-enable them.",
      commands: [
        "torch.backends.cuda.enable_flash_sdp(True)",
        "torch.backends.cuda.enable_mem_efficient_sdp(True)",
      ],
    },
  };
}
