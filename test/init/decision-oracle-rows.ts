/**
 * The rows of the generated decision table: every GPU row of the knowledge base (and the named
 * systems) x driver branches x pin forms x strategies, in three blocks so the table stays near a
 * thousand plans (each plan costs the planner a few milliseconds):
 * - drivers: one GPU of each (capability, CPU, floor, system) class x every driver branch x every
 *   strategy, with a few plain projects in turn;
 * - pins: every project x half the classes (alternating), strategy and driver in turn;
 * - every GPU: each remaining GPU row x every strategy, driver and project in turn.
 */
import type { OracleRow, OracleTarget } from "./decision-oracle.js";
import type { ProjectCase } from "./decision-oracle-projects.js";

/** One GPU (or system) per class of the knowledge base's GPUs as the planner sees them. */
export const CLASS_TARGETS = [
  "Tesla V100-SXM2",
  "Tesla T4",
  "NVIDIA A100",
  "NVIDIA A10",
  "Orin",
  "NVIDIA L4",
  "NVIDIA H100",
  "NVIDIA GH200 480GB",
  "NVIDIA B200",
  "NVIDIA GB200",
  "NVIDIA B300",
  "NVIDIA GB300",
  "NVIDIA Rubin",
  "NVIDIA GeForce RTX 5090",
  "dgx-spark",
  "jetson-thor",
];

export const DRIVER_BRANCHES = ["535", "550", "570", "575", "580", "590"];
const STRATEGIES = ["auto", "container", "native"] as const;
/** The drivers the pins block turns through: the richest first. */
const PIN_DRIVERS = ["580", null, "570", "590", "580.65.06", "550", "560"];
/** The projects the drivers block turns through. */
const DRIVER_PROJECTS = [
  "torch not named (transformers, accelerate)",
  "torch>=2.7",
  "torch==2.8.0, numpy<2",
  "torch",
];

/** null (not given), the GPU's floor where it has one, and every branch. */
export function driversOf(target: OracleTarget): Array<string | null> {
  return [null, ...(target.floor ? [target.floor] : []), ...DRIVER_BRANCHES];
}

export function generateRows(
  gpuNames: string[],
  projects: ProjectCase[],
  targetOf: (name: string) => OracleTarget,
): OracleRow[] {
  const byId = new Map(projects.map((p) => [p.id, p]));
  const rows: OracleRow[] = [];
  let turn = 0;
  for (const name of CLASS_TARGETS)
    for (const driver of driversOf(targetOf(name)))
      for (const strategy of STRATEGIES) {
        const project = byId.get(DRIVER_PROJECTS[turn++ % DRIVER_PROJECTS.length]!);
        if (project) rows.push({ target: name, driver, project, strategy });
      }
  projects.forEach((project, p) =>
    CLASS_TARGETS.forEach((name, c) => {
      if ((c + p) % 2 !== 0) return;
      const strategy = STRATEGIES[(c + p) % 3]!;
      const driver = PIN_DRIVERS[(p + Math.floor(c / 2)) % PIN_DRIVERS.length] ?? null;
      rows.push({ target: name, driver, project, strategy });
    }),
  );
  const others = gpuNames.filter((name) => !CLASS_TARGETS.includes(name));
  others.forEach((name, g) => {
    const drivers = driversOf(targetOf(name));
    STRATEGIES.forEach((strategy, s) => {
      const i = g * 3 + s;
      rows.push({
        target: name,
        driver: drivers[i % drivers.length] ?? null,
        project: projects[(i * 7) % projects.length]!,
        strategy,
      });
    });
  });
  return rows;
}
