/**
 * GPU health differs between nodes: the same software on every node, but some nodes remap rows,
 * throttle or log Xids. Drift in the fleet's sense too: a job spread over them runs at the slowest
 * node's pace, or dies with its GPU. The reference is always a healthy GPU ("ok"), never the
 * majority; nodes whose health was not read are left out. The per-node rules (fleet-gpu-*) say what
 * each problem is and how bad.
 */
import {
  fleetFinding,
  nodeListText,
  ofTotal,
  spreadBy,
  spreadEvidence,
  type FleetWideRule,
} from "../rule-kit.js";

export const gpuHealthDrift: FleetWideRule = {
  scope: "fleet",
  id: "fleet-gpu-health-drift",
  title: "GPU health differs between nodes",
  severity: "warning",
  check(view) {
    const read = view.nodes.filter((n) => !n.fingerprint.gpuHealth.startsWith("not read"));
    const values = spreadBy(read, (n) => n.fingerprint.gpuHealth);
    const off = values.filter(([value]) => value !== "ok");
    const healthy = values.find(([value]) => value === "ok")?.[1] ?? [];
    if (off.length === 0 || healthy.length === 0) return [];
    const drifted = off.flatMap(([, nodes]) => nodes);
    return [
      fleetFinding(this, {
        message:
          `${ofTotal(drifted.length, read.length)} whose GPU health was read are not as healthy as the ${healthy.length} others: ` +
          `${off.map(([value, nodes]) => `${nodeListText(nodes, 4)}: ${value}`).join(". ")}. ` +
          "A job spread over these nodes runs at the pace of the slowest GPU, or stops with the one that fails.",
        evidence: spreadEvidence("gpuHealth", values, "ok"),
        fix: "Drain the nodes whose GPUs report problems (the fleet-gpu-* findings say what and how), reset or service them, and check again.",
        nodes: drifted,
      }),
    ];
  },
};
