/**
 * Passive GPU health, judged per node (health.ts reads the counters): Xid events since boot,
 * uncorrectable ECC errors, row remapping, page retirement, clock slowdowns, NVLink error counters,
 * the NVSwitch fabric registration and DCGM's own verdict. One rule per kind, so an admin can act on
 * (or ignore) each; each finding names the GPU and the counts.
 */
import { makeFinding } from "../../findings/finding.js";
import type { Finding, Severity } from "../../findings/types.js";
import { healthProblems, type HealthRuleId } from "../health.js";
import type { FleetNodeRule } from "../rule-kit.js";

const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

function healthRule(
  id: HealthRuleId,
  title: string,
  severity: Severity,
  fix: string,
  commands: string[],
): FleetNodeRule {
  return {
    scope: "node",
    id,
    title,
    severity,
    check(input): Finding[] {
      const problems = healthProblems(input.facts).filter((p) => p.rule === id);
      if (problems.length === 0) return [];
      const worst = problems.reduce<Severity>(
        (w, p) => (ORDER[p.severity] < ORDER[w] ? p.severity : w),
        "info",
      );
      return [
        makeFinding(this, {
          severity: worst,
          // Without counts, so the same problem on many nodes merges into one finding.
          message: `${[...new Set(problems.map((p) => p.what))].join("; ")}.`,
          evidence: problems.map((p) => ({ label: p.where, value: p.detail })),
          fix: { summary: fix, commands },
        }),
      ];
    },
  };
}

export const gpuXid = healthRule(
  "fleet-gpu-xid",
  "The kernel log holds GPU Xid events since boot",
  "warning",
  "Look up each Xid in NVIDIA's Xid catalog for its action; Xid 48, 64 and 79 mean failing memory or a GPU lost from the bus: drain the node and reset or service the GPU.",
  ["dmesg -T | grep -i xid", "nvidia-smi -q -d ECC,ROW_REMAPPER"],
);

export const gpuEccUncorrectable = healthRule(
  "fleet-gpu-ecc-uncorrectable",
  "A GPU counted uncorrectable ECC errors",
  "error",
  "An uncorrectable error since the last reset stops the applications that hit it; reset the GPU (or reboot) and watch whether it comes back.",
  ["nvidia-smi -q -d ECC", "nvidia-smi -r -i GPU   # with no process on it"],
);

export const gpuRowRemap = healthRule(
  "fleet-gpu-row-remap",
  "A GPU has a row remap pending or failed",
  "warning",
  "A pending remap takes effect at the next GPU reset: drain the node and reset the GPU. A failed remap means the GPU is out of spare rows: service it.",
  ["nvidia-smi -q -d ROW_REMAPPER"],
);

export const gpuRetiredPages = healthRule(
  "fleet-gpu-retired-pages",
  "A GPU has memory pages waiting to be retired",
  "warning",
  "Pages are retired when the driver reloads: drain the node and reboot it (or reload the driver).",
  ["nvidia-smi -q -d PAGE_RETIREMENT"],
);

export const gpuThrottled = healthRule(
  "fleet-gpu-throttled",
  "A GPU's clocks are slowed down by heat or power",
  "warning",
  "Check the node's cooling and power delivery; a GPU slowed by hardware holds back every rank of a job spread over the fleet.",
  ["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"],
);

export const gpuNvlinkErrors = healthRule(
  "fleet-gpu-nvlink-errors",
  "NVLink error counters are not zero",
  "warning",
  "Reset the counters (`nvidia-smi nvlink -r`) and run a collective; counters that grow again point at the link: service it.",
  ["nvidia-smi nvlink -e", "nvidia-smi nvlink -s"],
);

export const gpuFabric = healthRule(
  "fleet-gpu-fabric",
  "A GPU is not registered with the NVSwitch fabric",
  "error",
  "Start (or restart) the NVIDIA fabric manager on the node and wait for the GPUs' fabric state to read Completed; CUDA cannot use them before.",
  ["systemctl status nvidia-fabricmanager", "nvidia-smi -q | grep -A3 Fabric"],
);

export const gpuDcgmHealth = healthRule(
  "fleet-gpu-dcgm-health",
  "DCGM reports the node's GPUs unhealthy",
  "error",
  "Read DCGM's incidents on the node and act on them; `dcgmi diag -r 2` runs its active checks.",
  ["dcgmi health -c", "dcgmi diag -r 2"],
);
