/** float32 matmuls run without TF32 tensor cores on an Ampere-or-newer GPU: correct but slow. */
import type { Rule } from "../findings/types.js";
import { ev, findingsOf } from "../findings/finding.js";
import { torchLive } from "../rule-helpers/view.js";
import { judgeTf32, TF32_DISABLED } from "../judge/tf32.js";

export const tf32Disabled: Rule = {
  ...TF32_DISABLED,
  check(facts) {
    const live = torchLive(facts);
    if (!live) return [];
    const device = live.devices[0] ?? null;
    // Judged with validate's check.tf32 in src/judge/tf32.ts: the same verdict and words.
    const judgment = judgeTf32({
      device,
      allowTf32: live.tf32.matmul,
      precision: live.float32MatmulPrecision,
    });
    return findingsOf(this, judgment, {
      evidence: [
        ev("torch.backends.cuda.matmul.allow_tf32", live.tf32.matmul),
        ev("torch.get_float32_matmul_precision()", live.float32MatmulPrecision),
        ev("torch.backends.cudnn.allow_tf32", live.tf32.cudnn),
        ev("device", device ? `${device.name} (${device.capability.join(".")})` : null),
      ],
    });
  },
};
