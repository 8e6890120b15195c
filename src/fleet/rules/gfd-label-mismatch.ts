/**
 * GPU Feature Discovery's labels against what the probe saw on the node: the scheduler places
 * work by the labels, so a label that says "GPU, driver X" where the container sees none (the
 * GPU Operator validator's false "Ready", gpu-operator#2685) or another driver misleads it.
 */
import type { Evidence } from "../../findings/types.js";
import { fleetFinding, nodeListText, ofTotal, type FleetWideRule, type OkNode } from "../rule-kit.js";

function labelledDriver(labels: Record<string, string>): string | undefined {
  if (labels["nvidia.com/cuda.driver-version.full"]) return labels["nvidia.com/cuda.driver-version.full"];
  if (!labels["nvidia.com/cuda.driver.major"]) return undefined;
  return [
    labels["nvidia.com/cuda.driver.major"],
    labels["nvidia.com/cuda.driver.minor"],
    labels["nvidia.com/cuda.driver.rev"],
  ]
    .filter(Boolean)
    .join(".");
}

function labelProblems(n: OkNode): string[] {
  const labels = n.labels;
  if (!labels) return [];
  const nvidia = n.facts.host.nvidia;
  const problems: string[] = [];
  const product = labels["nvidia.com/gpu.product"];
  const count = Number(labels["nvidia.com/gpu.count"] ?? "0");
  const driver = labelledDriver(labels);
  if ((product || count > 0) && (nvidia.status !== "ok" || nvidia.gpus.length === 0)) {
    problems.push(
      `labelled ${product ?? "GPU"}${count ? ` x${count}` : ""}, but the container sees no GPU (nvidia-smi ${nvidia.status})`,
    );
  } else if (
    product &&
    nvidia.gpus.length > 0 &&
    !nvidia.gpus.some((g) => g.name.replace(/ /g, "-") === product)
  ) {
    problems.push(`labelled ${product}, nvidia-smi says ${nvidia.gpus[0]?.name ?? "?"}`);
  } else if (count > 0 && nvidia.gpus.length > 0 && count !== nvidia.gpus.length) {
    problems.push(`labelled ${count} GPUs, the probe's pod sees ${nvidia.gpus.length}`);
  }
  if (driver && nvidia.driverVersion && driver !== nvidia.driverVersion)
    problems.push(`labelled driver ${driver}, nvidia-smi says ${nvidia.driverVersion}`);
  return problems;
}

export const gfdLabelMismatch: FleetWideRule = {
  scope: "fleet",
  id: "fleet-gfd-label-mismatch",
  title: "GPU Feature Discovery labels disagree with the node",
  severity: "warning",
  check(view) {
    const rows: Evidence[] = [];
    const hit: string[] = [];
    for (const n of view.nodes) {
      const problems = labelProblems(n);
      if (problems.length === 0) continue;
      hit.push(n.node);
      rows.push({ label: n.node, value: problems.join("; ") });
    }
    if (hit.length === 0) return [];
    return [
      fleetFinding(this, {
        message: `${ofTotal(hit.length, view.nodes.length)}: the node labels the scheduler places work by do not match what the probe saw there (${nodeListText(hit)}).`,
        evidence: rows.slice(0, 50),
        fix: "Restart GPU Feature Discovery / the driver pods on those nodes so the labels are redone, and check the device plugin passes every GPU to containers.",
        nodes: hit,
      }),
    ];
  },
};
