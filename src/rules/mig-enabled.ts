/** MIG mode is on: each process sees one MIG slice, not the whole GPU. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { smiGpus } from "../rule-helpers/view.js";

export const migEnabled: Rule = {
  id: "mig-enabled",
  title: "MIG is enabled",
  severity: "warning",
  check(facts) {
    const mig = smiGpus(facts).filter((g) => g.migMode?.toLowerCase() === "enabled");
    if (mig.length === 0) return [];
    return [
      makeFinding(this, {
        message:
          `MIG is enabled on ${mig.map((g) => `GPU ${g.index} (${g.name})`).join(", ")}: a CUDA process sees at most one MIG ` +
          "instance with a fraction of the memory and SMs, peer-to-peer and NCCL across instances do not work, and benchmarks read low.",
        evidence: mig.map((g) => ev(`GPU ${g.index} MIG mode`, g.migMode)),
        fix: {
          summary: "Pick a MIG instance by UUID for this job, or disable MIG if you need the whole GPU.",
          commands: [
            "nvidia-smi -L   # lists MIG-<uuid> instances",
            "export CUDA_VISIBLE_DEVICES=MIG-<uuid>",
            `sudo nvidia-smi -i ${mig[0]?.index ?? 0} -mig 0   # disables MIG (needs no running processes; may need a GPU reset)`,
          ],
        },
      }),
    ];
  },
};
