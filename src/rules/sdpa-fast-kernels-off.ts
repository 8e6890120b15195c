/** scaled_dot_product_attention without its flash and memory-efficient backends falls back to the math kernel. */
import type { Rule } from "../findings/types.js";
import { ev, findingsOf } from "../findings/finding.js";
import { torchLive } from "../rule-helpers/view.js";
import { judgeSdpaSwitches, SDPA_FAST_KERNELS_OFF } from "../judge/sdpa-switches.js";

export const sdpaFastKernelsOff: Rule = {
  ...SDPA_FAST_KERNELS_OFF,
  check(facts) {
    const live = torchLive(facts);
    if (!live) return [];
    const { flash, efficient, cudnn, math } = live.sdpa;
    // Judged with validate's check.sdpa-backends in src/judge/sdpa-switches.ts.
    const judgment = judgeSdpaSwitches({ cudaAvailable: live.cudaAvailable, flash, efficient, cudnn });
    return findingsOf(this, judgment, {
      evidence: [
        ev("torch.backends.cuda.flash_sdp_enabled()", flash),
        ev("torch.backends.cuda.mem_efficient_sdp_enabled()", efficient),
        ev("torch.backends.cuda.cudnn_sdp_enabled()", cudnn),
        ev("torch.backends.cuda.math_sdp_enabled()", math),
        ev("torch", live.version),
      ],
    });
  },
};
