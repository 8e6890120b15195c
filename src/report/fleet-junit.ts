/** JUnit for a fleet: one testcase per node; down nodes are skipped, other unchecked nodes fail. */
import type { FleetReport } from "../fleet/types.js";
import type { JUnitCase, JUnitSuite } from "./junit.js";

export function fleetJUnitSuites(report: FleetReport): JUnitSuite[] {
  const all = [...report.fleetFindings, ...report.nodeFindings];
  const cases: JUnitCase[] = report.nodes.map((n) => {
    const base = {
      name: n.node,
      classname: `gpuprep.fleet.${report.mode}`,
      timeSeconds: (n.durationMs ?? 0) / 1000,
    };
    if (n.status === "down") return { ...base, status: "skip", message: n.reason ?? "down" };
    if (n.status !== "ok") return { ...base, status: "fail", message: `${n.status}: ${n.reason ?? ""}` };
    const mine = all.filter((f) => f.nodes.includes(n.node));
    const errors = mine.filter((f) => f.severity === "error");
    const details = mine.map((f) => `[${f.severity}] ${f.ruleId}: ${f.message}`).join("\n");
    if (errors.length > 0) {
      return { ...base, status: "fail", message: errors.map((f) => f.ruleId).join(", "), details };
    }
    return { ...base, status: "pass", ...(details ? { details } : {}) };
  });
  return [{ name: `gpuprep fleet ${report.mode} (${report.transport})`, cases }];
}
