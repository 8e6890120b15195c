/**
 * fleet validate --allreduce: one multi-node all-reduce through torchrun under srun, over the nodes
 * whose torch imports. Reported, not judged by speed: the knowledge base holds no interconnect
 * peaks. A failure says whether torch or the network is to blame.
 */
import type { Evidence } from "../../findings/types.js";
import { fleetFinding, nodeListText, type FleetWideRule } from "../rule-kit.js";
import type { AllreduceResult } from "../allreduce.js";

/** The launcher's errors name a missing or broken torch: then the network is not the suspect. */
function torchToBlame(errors: Record<string, string>): boolean {
  return Object.values(errors).some((e) =>
    /No module named '?torch|ModuleNotFoundError|ImportError|undefined symbol/.test(e),
  );
}

function sizeRows(result: AllreduceResult): Evidence[] {
  return result.sizes.map((s) => ({
    label: `${(s.bytes / 1048576).toFixed(2)} MiB`,
    value: `${(s.seconds * 1000).toFixed(3)} ms, algbw ${s.algbwGBs.toFixed(3)} GB/s, busbw ${s.busbwGBs.toFixed(3)} GB/s`,
  }));
}

export const allreduce: FleetWideRule = {
  scope: "fleet",
  id: "fleet-allreduce",
  title: "Multi-node all-reduce (torchrun under srun)",
  severity: "info",
  check(view) {
    const outcome = view.allreduce;
    if (!outcome) return [];
    const leftOut: Evidence[] = outcome.leftOut.map((l) => ({ label: `${l.node} (left out)`, value: l.why }));
    const result = outcome.result;
    if (!result) {
      return [
        fleetFinding(this, {
          severity: "error",
          message: `The all-reduce was not run: it needs two nodes whose torch imports, and ${outcome.leftOut.length} of ${view.all.length} are left out (${nodeListText(outcome.leftOut.map((l) => l.node))}).`,
          evidence: leftOut,
          fix: "Install the same torch on every node first (see fleet-torch-drift and the nodes' torch findings), then run --allreduce again.",
          nodes: outcome.leftOut.map((l) => l.node),
        }),
      ];
    }
    const errors = Object.entries(result.errors).map(([node, error]) => ({ label: node, value: error }));
    const failed = result.correct !== true || errors.length > 0;
    const without = outcome.leftOut.length
      ? ` (left out: ${nodeListText(outcome.leftOut.map((l) => l.node))})`
      : "";
    if (failed) {
      const torch = torchToBlame(result.errors);
      return [
        fleetFinding(this, {
          severity: "error",
          message: `The all-reduce across ${nodeListText(result.nodes)}${without} did not complete correctly${result.correct === false ? " (the reduced value was wrong)" : ""}${torch ? ": torch failed to import on a rank" : ""}.`,
          evidence: [...errors, ...leftOut, ...sizeRows(result)],
          fix: torch
            ? "A rank could not import torch: make the same torch importable on every node (the errors name the nodes), then run --allreduce again."
            : "Check that the nodes reach each other on the rendezvous port and that NCCL/gloo pick the right interface (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME).",
          nodes: result.nodes,
        }),
      ];
    }
    return [
      fleetFinding(this, {
        message:
          `${result.world} ranks on ${result.nodes.length} nodes${without} all-reduced correctly over ${result.backend}. ` +
          "Reported, not judged: the knowledge base holds no interconnect peaks to hold the bandwidth against.",
        evidence: [...sizeRows(result), ...leftOut],
        fix: "No action; compare busbw with your interconnect's rated bandwidth.",
        nodes: result.nodes,
      }),
    ];
  },
};
