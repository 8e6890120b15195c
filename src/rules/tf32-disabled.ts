/** float32 matmuls run without TF32 tensor cores on an Ampere-or-newer GPU: correct but slow. */
import type { Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { torchLive } from "../rule-helpers/view.js";

/** TF32 tensor cores exist from compute capability 8.0 (NVIDIA Ampere architecture whitepaper). */
const TF32_MIN_MAJOR = 8;

export const tf32Disabled: Rule = {
  id: "tf32-disabled",
  title: "TF32 is off for float32 matmuls",
  severity: "info",
  check(facts) {
    const live = torchLive(facts);
    const device = live?.devices[0];
    if (!live || !device || device.capability[0] < TF32_MIN_MAJOR) return [];
    if (live.tf32.matmul !== false || (live.float32MatmulPrecision ?? "highest") !== "highest") return [];
    return [
      makeFinding(this, {
        message: `float32 matmuls on ${device.name} use full-precision FP32 instead of TF32 tensor cores (torch's default); models trained in float32 run several times slower than they could.`,
        evidence: [
          ev("torch.backends.cuda.matmul.allow_tf32", live.tf32.matmul),
          ev("torch.get_float32_matmul_precision()", live.float32MatmulPrecision),
          ev("torch.backends.cudnn.allow_tf32", live.tf32.cudnn),
          ev("device", `${device.name} (${device.capability.join(".")})`),
        ],
        fix: {
          summary:
            "If TF32's 10-bit mantissa is acceptable for your model, turn it on at start-up (or train in bf16).",
          commands: ['torch.set_float32_matmul_precision("high")'],
        },
      }),
    ];
  },
};
