/** CUDA_VISIBLE_DEVICES differs: an empty value hides every GPU on that node. */
import { fleetFinding, nodeListText, spreadEvidence, type FleetWideRule } from "../rule-kit.js";
import { fieldDrift } from "./field-drift.js";

export const visibleDevicesDrift: FleetWideRule = {
  scope: "fleet",
  id: "fleet-visible-devices-drift",
  title: "CUDA_VISIBLE_DEVICES differs between nodes",
  severity: "warning",
  check(view) {
    const drift = fieldDrift(view, "visibleDevices");
    if (!drift) return [];
    const empty = view.nodes.filter((n) => n.facts.python.env["CUDA_VISIBLE_DEVICES"] === "");
    const hidden = empty.map((n) => n.node);
    const hiddenWithGpus = empty.filter((n) => n.facts.host.nvidia.gpus.length > 0).map((n) => n.node);
    return [
      fleetFinding(this, {
        severity: hiddenWithGpus.length > 0 ? "error" : "warning",
        message:
          `CUDA_VISIBLE_DEVICES is not the same on every node: ${drift.values.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}.` +
          (hidden.length > 0
            ? ` It is empty on ${nodeListText(hidden)}: CUDA sees no GPU there${hiddenWithGpus.length ? " although nvidia-smi lists some" : ""}, so torch falls back to the CPU or fails.`
            : ""),
        evidence: spreadEvidence("visibleDevices", drift.values, drift.expected.text),
        fix: "Find what sets it on those nodes (a TaskProlog, the job script, a shell profile, the container's env) and leave it to Slurm's GRES / the device plugin.",
        nodes: hidden.length > 0 ? hidden : drift.drifted,
      }),
    ];
  },
};
