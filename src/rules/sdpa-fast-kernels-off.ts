/** scaled_dot_product_attention without its flash and memory-efficient backends falls back to the math kernel. */
import type { Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { torchLive } from "../rule-helpers/view.js";

export const sdpaFastKernelsOff: Rule = {
  id: "sdpa-fast-kernels-off",
  title: "SDPA flash / memory-efficient backends are disabled",
  severity: "warning",
  check(facts) {
    const live = torchLive(facts);
    if (!live || !live.cudaAvailable) return [];
    const { flash, efficient, cudnn, math } = live.sdpa;
    const off = [flash === false ? "flash" : null, efficient === false ? "mem_efficient" : null].filter(
      (x): x is string => x !== null,
    );
    if (off.length === 0) return [];
    const both = off.length === 2;
    return [
      makeFinding(this, {
        severity: both ? "warning" : "info",
        message: both
          ? `torch.nn.functional.scaled_dot_product_attention has its flash and memory-efficient backends disabled${cudnn ? " (only cuDNN and math remain)" : ""}: attention falls back to the math kernel, slower and with memory quadratic in sequence length.`
          : `The SDPA ${off[0]} backend is disabled in this process; attention uses the remaining backends.`,
        evidence: [
          ev("torch.backends.cuda.flash_sdp_enabled()", flash),
          ev("torch.backends.cuda.mem_efficient_sdp_enabled()", efficient),
          ev("torch.backends.cuda.cudnn_sdp_enabled()", cudnn),
          ev("torch.backends.cuda.math_sdp_enabled()", math),
          ev("torch", live.version),
        ],
        fix: {
          summary:
            "Find what disables them at import (sitecustomize, an env-driven library setting) and re-enable them.",
          commands: [
            "torch.backends.cuda.enable_flash_sdp(True)",
            "torch.backends.cuda.enable_mem_efficient_sdp(True)",
          ],
        },
      }),
    ];
  },
};
