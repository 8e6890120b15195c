/**
 * Passive GPU health read from a node's facts (probe --gpu-health): which counters and states are
 * problems, how bad, and the one-line summary the fingerprint carries, so a node that is identical
 * in software but remaps rows or throttles stands apart from its group. Judged by NVIDIA's own
 * documentation, cited where each threshold is set; nothing is run on the GPUs (DCGM's job).
 */
import type { Facts } from "../facts/schema.js";
import type { Severity } from "../findings/types.js";

type GpuHealth = NonNullable<Facts["host"]["gpuHealth"]>;
type Entry = GpuHealth["gpus"][number];

/** One problem on one GPU (or the node, for the kernel log and DCGM). */
interface HealthProblem {
  /** Which fleet rule reports it. */
  rule: HealthRuleId;
  severity: Severity;
  /** "GPU 00000000:3B:00.0" or "node". */
  where: string;
  /** Short and stable, without counts that change between runs: the fingerprint uses it. */
  what: string;
  /** With the counts. */
  detail: string;
}

export type HealthRuleId =
  | "fleet-gpu-xid"
  | "fleet-gpu-ecc-uncorrectable"
  | "fleet-gpu-row-remap"
  | "fleet-gpu-retired-pages"
  | "fleet-gpu-throttled"
  | "fleet-gpu-nvlink-errors"
  | "fleet-gpu-fabric"
  | "fleet-gpu-dcgm-health";

/**
 * Clock event reasons that slow the GPU down because something is wrong (heat, power delivery,
 * a hardware slowdown signal); idle, the application clock setting, sync boost and the display
 * clock are normal, and the software power cap is a GPU working at its power limit. Names as
 * nvidia-smi prints them (test/fixtures/gpu-health/h200/help-query-gpu.txt, clocks_event_reasons.*).
 */
const SLOWDOWN_REASONS = new Set([
  "hw_slowdown",
  "hw_thermal_slowdown",
  "hw_power_brake_slowdown",
  "sw_thermal_slowdown",
]);

/**
 * Xid codes that mean the GPU's memory or bus failed, by NVIDIA's pages: 48 a double-bit ECC error
 * and 64 a failed page retirement (https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html),
 * 79 the GPU fell off the bus (https://docs.nvidia.com/deploy/gpu-operational-events/latest/release-notes.html).
 * Every other Xid is a warning: the catalog (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)
 * gives each its action, from restarting the application to contacting support.
 */
const FATAL_XIDS = new Set([48, 64, 79]);

function gpuName(entry: Entry, index: number): string {
  return `GPU ${entry.pciBusId ?? index}`;
}

function eccProblems(entry: Entry, where: string): HealthProblem[] {
  const volatile = entry.eccVolatile.uncorrectable ?? 0;
  const aggregate = entry.eccAggregate.uncorrectable ?? 0;
  if (volatile > 0)
    return [
      {
        rule: "fleet-gpu-ecc-uncorrectable",
        severity: "error",
        where,
        what: "uncorrectable ECC errors since the last reset",
        detail: `${volatile} uncorrectable ECC error${volatile === 1 ? "" : "s"} since the last driver load or reset (${aggregate} in the GPU's life)`,
      },
    ];
  if (aggregate > 0)
    return [
      {
        rule: "fleet-gpu-ecc-uncorrectable",
        severity: "info",
        where,
        what: "uncorrectable ECC errors in the GPU's life",
        detail: `${aggregate} uncorrectable ECC error${aggregate === 1 ? "" : "s"} in the GPU's life, none since the last reset`,
      },
    ];
  return [];
}

/**
 * Row remapping (Ampere and newer), by NVIDIA's GPU memory error management guide
 * (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html): a pending remap takes effect
 * at the next GPU reset; a remapping failure means the GPU is out of spare rows for a bank.
 */
function remapProblems(entry: Entry, where: string): HealthProblem[] {
  const rows = entry.remappedRows;
  if (!rows) return [];
  const counts = `${rows.correctable ?? 0} correctable, ${rows.uncorrectable ?? 0} uncorrectable rows remapped`;
  if (rows.failure)
    return [
      {
        rule: "fleet-gpu-row-remap",
        severity: "error",
        where,
        what: "row remapping failed",
        detail: `a row remapping failed (${counts})`,
      },
    ];
  if (rows.pending)
    return [
      {
        rule: "fleet-gpu-row-remap",
        severity: "warning",
        where,
        what: "row remap pending a GPU reset",
        detail: `a row remap waits for a GPU reset (${counts})`,
      },
    ];
  return [];
}

/** Dynamic page retirement (https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html). */
function retiredPageProblems(entry: Entry, where: string): HealthProblem[] {
  const pages = entry.retiredPages;
  if (!pages.pending) return [];
  return [
    {
      rule: "fleet-gpu-retired-pages",
      severity: "warning",
      where,
      what: "page retirement pending a reboot",
      detail: `pages wait to be retired at the next driver reload (${pages.singleBit ?? 0} single-bit, ${pages.doubleBit ?? 0} double-bit retired so far)`,
    },
  ];
}

function throttleProblems(entry: Entry, where: string): HealthProblem[] {
  const slow = entry.clockEventReasons.filter((r) => SLOWDOWN_REASONS.has(r)).sort();
  if (slow.length === 0) return [];
  return [
    {
      rule: "fleet-gpu-throttled",
      severity: "warning",
      where,
      what: `clocks slowed: ${slow.join(", ")}`,
      detail: `clocks slowed down now: ${slow.join(", ")}`,
    },
  ];
}

function nvlinkProblems(entry: Entry, where: string): HealthProblem[] {
  const errors = Object.entries(entry.nvlinkErrors ?? {}).filter(([, n]) => n > 0);
  if (errors.length === 0) return [];
  return [
    {
      rule: "fleet-gpu-nvlink-errors",
      severity: "warning",
      where,
      what: `NVLink ${errors
        .map(([name]) => name)
        .sort()
        .join(", ")}`,
      detail: `NVLink error counters: ${errors.map(([name, n]) => `${name} ${n}`).join(", ")} (summed over its links)`,
    },
  ];
}

/**
 * NVSwitch systems register each GPU with the fabric manager; until the state is "Completed" with
 * status "Success", CUDA cannot use the GPU (nvidia-smi -q "Fabric" section; N/A where there is no
 * NVSwitch, as on the capture in test/fixtures/gpu-health/h200).
 */
function fabricProblems(entry: Entry, where: string): HealthProblem[] {
  const { state, status } = entry.fabric;
  if (state === null) return [];
  const ok = state === "Completed" && (status === null || status === "Success");
  if (ok) return [];
  return [
    {
      rule: "fleet-gpu-fabric",
      severity: "error",
      where,
      what: `fabric ${state}${status ? ` (${status})` : ""}`,
      detail: `fabric manager registration: state ${state}, status ${status ?? "N/A"}`,
    },
  ];
}

function xidProblems(health: GpuHealth): HealthProblem[] {
  return health.xids.events.map((e) => ({
    rule: "fleet-gpu-xid" as const,
    severity: FATAL_XIDS.has(e.code) ? ("error" as const) : ("warning" as const),
    where: `GPU ${e.pci}`,
    what: `Xid ${e.code}`,
    detail: `Xid ${e.code} ×${e.count} since boot, last: ${e.last}`,
  }));
}

function dcgmProblems(health: GpuHealth): HealthProblem[] {
  const { overall, status } = health.dcgm;
  if (status === "not-installed" || (status === "ok" && overall?.toLowerCase() === "healthy")) return [];
  const severity: Severity = overall?.toLowerCase() === "warning" ? "warning" : "error";
  return [
    {
      rule: "fleet-gpu-dcgm-health",
      severity,
      where: "node",
      what: `DCGM health ${overall ?? status}`,
      detail: `dcgmi health -c: ${overall ?? `no verdict (${status})`}`,
    },
  ];
}

/** Every problem on the node, GPUs in order, then the kernel log's and DCGM's. */
export function healthProblems(facts: Facts): HealthProblem[] {
  const health = facts.host.gpuHealth;
  if (!health) return [];
  const perGpu = health.gpus.flatMap((entry, index) => {
    const where = gpuName(entry, index);
    return [
      ...eccProblems(entry, where),
      ...remapProblems(entry, where),
      ...retiredPageProblems(entry, where),
      ...throttleProblems(entry, where),
      ...nvlinkProblems(entry, where),
      ...fabricProblems(entry, where),
    ];
  });
  return [...perGpu, ...xidProblems(health), ...dcgmProblems(health)];
}

/** The fingerprint's field: "ok", "not read", or the problems without their counts. */
export function healthSummary(facts: Facts): string {
  const health = facts.host.gpuHealth;
  if (!health) return "not read";
  if (health.status !== "ok") return `not read (${health.error ?? "nvidia-smi failed"})`;
  const problems = healthProblems(facts).filter((p) => p.severity !== "info");
  if (problems.length === 0) return "ok";
  return [...new Set(problems.map((p) => `${p.where}: ${p.what}`))].join("; ");
}
