/** Drivers differ; judged against every torch CUDA in the fleet with the KB's driver floors. */
import { parseDriverVersion } from "../../vocabulary/driver-version.js";
import {
  dedupeEvidence,
  fleetFinding,
  nodeListText,
  ofTotal,
  safe,
  spreadEvidence,
  type FleetWideRule,
  type OkNode,
} from "../rule-kit.js";
import type { Evidence } from "../../findings/types.js";
import type { KnowledgeBase } from "../../kb/index.js";
import { fieldDrift, referencePhrase } from "./field-drift.js";

function torchBuilds(nodes: readonly OkNode[]): Map<string, { cuda: string; nodes: string[] }> {
  const builds = new Map<string, { cuda: string; nodes: string[] }>();
  for (const n of nodes) {
    const torch = n.facts.python.torch;
    if (!torch?.cudaVersion) continue;
    const entry = builds.get(torch.version) ?? { cuda: torch.cudaVersion, nodes: [] };
    entry.nodes.push(n.node);
    builds.set(torch.version, entry);
  }
  return builds;
}

/** Each (driver, torch build) pair the KB says fails or needs minor-version compatibility. */
function judgeDrivers(
  kb: KnowledgeBase,
  values: Array<[string, string[]]>,
  nodes: readonly OkNode[],
  total: number,
) {
  const failures: string[] = [];
  const failing = new Set<string>();
  const evidence: Evidence[] = [];
  for (const [driver, driverNodes] of values) {
    // The fingerprint groups nodes by their driver's text ("none" where nvidia-smi gave none).
    const value = parseDriverVersion(driver);
    if (!value) continue;
    for (const [version, build] of torchBuilds(nodes)) {
      const judged = safe(() => kb.driverSupportFor(value, build.cuda));
      if (!judged || judged.support === "native") continue;
      const verb = judged.support === "unsupported" ? "fails" : "runs only under minor-version compatibility";
      failures.push(
        `${ofTotal(driverNodes.length, total)} have driver ${driver}; torch ${version} (CUDA ${build.cuda}, on ${nodeListText(build.nodes, 3)}) ${verb} there`,
      );
      evidence.push({
        label: `CUDA ${judged.toolkit.version} driver floor`,
        value: `${judged.toolkit.minDriverLinux}${judged.toolkit.minorCompatMinDriverLinux ? ` (minor-version compatibility from ${judged.toolkit.minorCompatMinDriverLinux})` : ""}`,
      });
      if (judged.support === "unsupported") driverNodes.forEach((d) => failing.add(d));
    }
  }
  return { failures, failing, evidence };
}

export const driverDrift: FleetWideRule = {
  scope: "fleet",
  id: "fleet-driver-drift",
  title: "NVIDIA driver differs between nodes",
  severity: "warning",
  check(view, kb) {
    const drift = fieldDrift(view, "driver");
    if (!drift) return [];
    const judged = judgeDrivers(kb, drift.values, view.nodes, view.nodes.length);
    const message =
      judged.failures.length > 0
        ? `${judged.failures.join(". ")}.`
        : `${ofTotal(drift.drifted.length, view.nodes.length)} run a different driver than ${referencePhrase(drift.expected, drift.values)}: ` +
          `${drift.off.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}. Every torch build here still runs on each (by the knowledge base's driver floors).`;
    return [
      fleetFinding(this, {
        severity: judged.failing.size > 0 ? "error" : "warning",
        message,
        evidence: dedupeEvidence([
          ...spreadEvidence("driver", drift.values, drift.expected.text),
          ...judged.evidence,
        ]),
        fix: "Bring every node to the same driver branch (the newest one the fleet's torch builds need); drain the older nodes until then.",
        nodes: judged.failing.size > 0 ? [...judged.failing] : drift.drifted,
      }),
    ];
  },
};
