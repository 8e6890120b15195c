/** torch's version or CUDA differs, or torch is missing: the classic "works on node 3". */
import { NOT_INSTALLED } from "../fingerprint.js";
import { fleetFinding, nodeListText, ofTotal, spreadEvidence, type FleetWideRule } from "../rule-kit.js";
import { fieldDrift, referencePhrase } from "./field-drift.js";

export const torchDrift: FleetWideRule = {
  scope: "fleet",
  id: "fleet-torch-drift",
  title: "torch differs between nodes",
  severity: "error",
  check(view) {
    const version = fieldDrift(view, "torch");
    // Nodes without torch have no CUDA of it ("-"): their drift is the version's.
    const cuda = fieldDrift(
      { ...view, nodes: view.nodes.filter((n) => n.fingerprint.torchCuda !== "-") },
      "torchCuda",
    );
    if (!version && !cuda) return [];
    const parts: string[] = [];
    const missing = version?.off.find(([v]) => v === NOT_INSTALLED)?.[1] ?? [];
    if (missing.length)
      parts.push(
        `torch is not installed on ${ofTotal(missing.length, view.nodes.length)} (${nodeListText(missing)})`,
      );
    const other = version?.off.filter(([v]) => v !== NOT_INSTALLED) ?? [];
    if (version && other.length)
      parts.push(
        `torch differs from ${referencePhrase(version.expected, version.values)}: ${other.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}`,
      );
    if (cuda)
      parts.push(
        `torch's CUDA differs from ${referencePhrase(cuda.expected, cuda.values)}: ${cuda.off.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}`,
      );
    return [
      fleetFinding(this, {
        message: `${parts.join(". ")}. A job spread over these nodes imports different code on each, or fails to import torch at all.`,
        evidence: [
          ...(version ? spreadEvidence("torch", version.values, version.expected.text) : []),
          ...(cuda ? spreadEvidence("torchCuda", cuda.values, cuda.expected.text) : []),
        ],
        fix: "Install the same torch build on every node (one shared venv or container image); check with `python -c 'import torch; print(torch.__version__)'` through srun on all nodes.",
        nodes: [...new Set([...(version?.drifted ?? []), ...(cuda?.drifted ?? [])])],
      }),
    ];
  },
};
