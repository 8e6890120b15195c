/** CUDA_VISIBLE_DEVICES makes torch see fewer GPUs than nvidia-smi lists. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { envVar, smiGpus, torchLive } from "../rule-helpers/view.js";

/** Values that hide every device (the CUDA runtime treats an empty list or an invalid first index as "no devices"). */
const HIDES_ALL = /^\s*(|-1|NoDevFiles|none)\s*$/i;

export const cudaVisibleDevicesHidesGpus: Rule = {
  id: "cuda-visible-devices-hides-gpus",
  title: "CUDA_VISIBLE_DEVICES hides GPUs",
  severity: "warning",
  check(facts) {
    const visible = envVar(facts, "CUDA_VISIBLE_DEVICES");
    const gpus = smiGpus(facts);
    if (visible === undefined || gpus.length === 0) return [];
    const live = torchLive(facts);
    const seen = live && live.cudaBuilt !== null ? live.deviceCount : null;
    const hidesAll = seen === 0 || (seen === null && HIDES_ALL.test(visible));
    if (!hidesAll && (seen === null || seen >= gpus.length)) return [];
    return [
      makeFinding(this, {
        severity: hidesAll ? "error" : "warning",
        // Hiding every GPU is why torch sees none: one finding with torch-cuda-unavailable.
        ...(hidesAll ? { cause: "cuda-unavailable", subject: "torch" } : {}),
        message: hidesAll
          ? `CUDA_VISIBLE_DEVICES=${JSON.stringify(visible)} hides every GPU: nvidia-smi lists ${gpus.length}, torch sees none.`
          : `CUDA_VISIBLE_DEVICES=${JSON.stringify(visible)} limits torch to ${seen} of the ${gpus.length} GPUs nvidia-smi lists.`,
        evidence: [
          ev("CUDA_VISIBLE_DEVICES", JSON.stringify(visible)),
          ev("nvidia-smi GPUs", gpus.length),
          ev("torch.cuda.device_count()", seen ?? "(torch not run)"),
        ],
        fix: {
          summary: hidesAll
            ? "Unset CUDA_VISIBLE_DEVICES (or list the GPUs you want by index or UUID)."
            : "If that is not intended, unset CUDA_VISIBLE_DEVICES or list every GPU.",
          commands: [
            "unset CUDA_VISIBLE_DEVICES",
            `export CUDA_VISIBLE_DEVICES=${gpus.map((g) => g.index).join(",")}`,
          ],
        },
      }),
    ];
  },
};
