/**
 * Nodes that were not checked, one rule per reason (down, unreachable, hung, failed, garbage), each
 * with every node's own reason; and the run that checked no node at all.
 */
import type { Severity } from "../../findings/types.js";
import { compareNodeNames } from "../order.js";
import { fleetFinding, nodeListText, type FleetWideRule } from "../rule-kit.js";
import type { NodeStatus } from "../types.js";

function stateRule(
  status: Exclude<NodeStatus, "ok">,
  id: string,
  title: string,
  severity: Severity,
  fix: (reasons: string[]) => string,
): FleetWideRule {
  return {
    scope: "fleet",
    id,
    title,
    severity,
    check(view) {
      const hit = view.all
        .filter((n) => n.status === status)
        .sort((a, b) => compareNodeNames(a.node, b.node));
      if (hit.length === 0) return [];
      const total = view.all.length;
      const verb = status === "down" ? "are down or reserved" : `are ${status}`;
      return [
        fleetFinding(this, {
          message: `${hit.length} of ${total} node${total === 1 ? "" : "s"} ${verb}: ${nodeListText(
            hit.map((n) => n.node),
            8,
          )}.`,
          evidence: hit.slice(0, 50).map((n) => ({ label: n.node, value: n.reason ?? status })),
          fix: fix(hit.map((n) => n.reason ?? "")),
          nodes: hit.map((n) => n.node),
        }),
      ];
    },
  };
}

const RESERVED = /reservation/;
const RESUME =
  "Bring the nodes back once fixed (`scontrol update NodeName=... State=RESUME`) or leave them out with --nodelist; they were not checked.";
const IN_RESERVATION =
  "Nodes in a reservation are checked when the run uses it: pass `-- --reservation=NAME` (each reason names it).";

export const nodeDown = stateRule(
  "down",
  "fleet-node-down",
  "Nodes the scheduler reports down",
  "warning",
  (reasons) => {
    const reserved = reasons.filter((r) => RESERVED.test(r)).length;
    if (reserved === 0) return RESUME;
    return reserved === reasons.length ? IN_RESERVATION : `${IN_RESERVATION} The others: ${RESUME}`;
  },
);

export const nodeUnreachable = stateRule(
  "unreachable",
  "fleet-node-unreachable",
  "Nodes that never ran the check",
  "error",
  () =>
    "Run `srun -w NODE hostname` (or `ssh NODE true`, or look at the pod's events) to see why the node does not start work.",
);

export const nodeHung = stateRule(
  "hung",
  "fleet-node-hung",
  "Nodes that did not answer within the per-node limit",
  "error",
  () =>
    "Log in and run the interpreter by hand (`python3 -c 'import torch'`); a hung import or a stuck GPU shows there. Raise --node-timeout only if the node is just slow.",
);

export const nodeFailed = stateRule(
  "failed",
  "fleet-node-failed",
  "Nodes where the check could not run",
  "error",
  (reasons) =>
    reasons.some((r) => /node failure|crashed/i.test(r))
      ? "The node itself failed during the run (the scheduler says why): look at `scontrol show node NODE` and the node's kernel log before returning it to service."
      : "Check the interpreter there (--python PATH); the reason is per node below.",
);

export const nodeGarbage = stateRule(
  "garbage",
  "fleet-node-garbage",
  "Nodes that answered something other than a gpuprep result",
  "error",
  () => "A wrapper, shell profile or different program answers as python there; run it by hand on the node.",
);

export const nothingChecked: FleetWideRule = {
  scope: "fleet",
  id: "fleet-nothing-checked",
  title: "No node was checked",
  severity: "error",
  check(view) {
    if (view.all.length === 0 || view.nodes.length > 0) return [];
    const nodes = view.all.map((n) => n.node);
    return [
      fleetFinding(this, {
        message: `None of the ${nodes.length} selected node${nodes.length === 1 ? "" : "s"} was checked (${nodeListText(nodes)}): the report says nothing about their environment.`,
        evidence: [],
        fix: "See why each node was not checked above; nodes in a maintenance reservation need `-- --reservation=NAME`.",
        nodes,
      }),
    ];
  },
};
