/**
 * Every installed distribution compared between nodes (the full list each snapshot holds, not only
 * the import-checked extensions): torchvision missing on two nodes, a different transformers, a
 * flash-attn built for other GPUs. The always-reported packages are named first; --ignore-package
 * leaves some out. torch and numpy have rules of their own.
 */
import type { Evidence } from "../../findings/types.js";
import { NOT_INSTALLED_PACKAGE, packageCompared } from "../packages.js";
import { compareNodeNames } from "../order.js";
import { fleetFinding, nodeListText, ofTotal, type FleetView, type FleetWideRule } from "../rule-kit.js";

/** Shown in the message; every drifted package is in the evidence (and --json). */
const NAMED_IN_MESSAGE = 8;

interface PackageDrift {
  name: string;
  expected: string;
  fromBaseline: boolean;
  values: Array<[string, string[]]>;
  drifted: string[];
  always: boolean;
}

/** "2.8.3 [sm_80 sm_90]" and "2.8.3" are the same version; targets compare only where both have them. */
function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const bare = (v: string) => v.replace(/ \[.*\]$/, "");
  return (!a.includes(" [") || !b.includes(" [")) && bare(a) === bare(b);
}

/** Nodes grouped by their (shared) package map: the work is per environment, not per node. */
function environments(view: FleetView): Array<{ map: ReadonlyMap<string, string>; nodes: string[] }> {
  const byMap = new Map<ReadonlyMap<string, string>, string[]>();
  for (const n of view.nodes) {
    const list = byMap.get(n.packages);
    if (list) list.push(n.node);
    else byMap.set(n.packages, [n.node]);
  }
  return [...byMap].map(([map, nodes]) => ({ map, nodes }));
}

function driftOf(view: FleetView, name: string, envs: ReturnType<typeof environments>): PackageDrift | null {
  const byValue = new Map<string, string[]>();
  for (const env of envs) {
    const value = env.map.get(name) ?? NOT_INSTALLED_PACKAGE;
    byValue.set(value, [...(byValue.get(value) ?? []), ...env.nodes]);
  }
  const values = [...byValue].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const fromBaseline = view.reference.expectedPackage(name);
  const expected = fromBaseline ?? values[0]?.[0] ?? NOT_INSTALLED_PACKAGE;
  const off = values.filter(([value]) => !sameValue(value, expected));
  if (off.length === 0) return null;
  return {
    name,
    expected,
    fromBaseline: fromBaseline !== undefined,
    values,
    drifted: off.flatMap(([, nodes]) => nodes).sort(compareNodeNames),
    always: view.packages.alwaysReported.has(name),
  };
}

function describe(drift: PackageDrift): string {
  const off = drift.values.filter(([value]) => !sameValue(value, drift.expected));
  return `${drift.name} ${off.map(([v, ns]) => `${v} on ${nodeListText(ns, 3)}`).join(", ")} (${drift.fromBaseline ? "baseline" : "most nodes"}: ${drift.expected})`;
}

export const packageDrift: FleetWideRule = {
  scope: "fleet",
  id: "fleet-package-drift",
  title: "Installed packages differ between nodes",
  severity: "warning",
  check(view) {
    const envs = environments(view);
    const names = new Set<string>();
    for (const env of envs) for (const name of env.map.keys()) names.add(name);
    for (const name of view.packages.alwaysReported) names.add(name);
    const drifts = [...names]
      .filter((name) => packageCompared(view.packages, name))
      .map((name) => driftOf(view, name, envs))
      .filter((d): d is PackageDrift => d !== null)
      .sort(
        (a, b) =>
          Number(b.always) - Number(a.always) ||
          b.drifted.length - a.drifted.length ||
          a.name.localeCompare(b.name),
      );
    if (drifts.length === 0) return [];
    const nodes = [...new Set(drifts.flatMap((d) => d.drifted))].sort(compareNodeNames);
    const shown = drifts.slice(0, NAMED_IN_MESSAGE).map(describe);
    const more = drifts.length - shown.length;
    const evidence: Evidence[] = drifts.slice(0, 200).map((d) => ({
      label: `${d.name}${d.always ? "" : " (other)"}`,
      value: d.values.map(([v, ns]) => `${v} on ${nodeListText(ns, 6)}`).join("; "),
    }));
    return [
      fleetFinding(this, {
        severity: drifts.some((d) => d.always) ? "warning" : "info",
        message:
          `${drifts.length} installed package${drifts.length === 1 ? "" : "s"} differ on ${ofTotal(nodes.length, view.nodes.length)}: ${shown.join("; ")}` +
          `${more > 0 ? `; and ${more} more (every one in the evidence, --json)` : ""}. A job imports different code, or fails to import, on those nodes.`,
        evidence,
        fix: "Install the environment the same way on every node (one image, one lock file, one shared venv); --ignore-package NAME leaves out packages that may differ.",
        nodes,
      }),
    ];
  },
};
