/** What a fleet run knows about each node, and the merged report built from it. */
import type { Facts } from "../facts/schema.js";
import type { Finding } from "../findings/types.js";

/**
 * ok: a probe result came back; down: the scheduler reports the node down (not asked);
 * unreachable: asked, never ran; hung: killed or abandoned at the per-node limit;
 * failed: ran and failed (no such Python, probe refused, crash); garbage: ran but its output is
 * not a gpuprep result.
 */
export type NodeStatus = "ok" | "down" | "unreachable" | "hung" | "failed" | "garbage";

export interface NodeResult {
  node: string;
  status: NodeStatus;
  /** One line: why it is not ok. */
  reason: string | null;
  facts: Facts | null;
  durationMs: number | null;
  /** Kubernetes node labels (GPU Feature Discovery's nvidia.com/*), when known. */
  labels?: Record<string, string>;
  /** Where a replayed snapshot came from. */
  source?: string;
  /** The stable key of the facts (volatile.ts), when the reader already computed it. */
  contentKey?: string;
}

/** The fields two nodes must share to run the same job the same way. */
export interface Fingerprint {
  gpus: string;
  driver: string;
  /** The CUDA version the driver supports (nvidia-smi). */
  driverCuda: string;
  cpuArch: string;
  python: string;
  torch: string;
  torchCuda: string;
  torchArchList: string;
  nccl: string;
  numpy: string;
  extensions: string;
  /** Extension binaries' SASS/PTX targets, when the nodes' binaries were scanned. */
  binaryCoverage: string;
  visibleDevices: string;
  /** "ok", "not read", or the GPU health problems without their counts (health.ts). */
  gpuHealth: string;
}

export type FingerprintField = keyof Fingerprint;

export interface NodeGroup {
  /** "A", "B", ... by size, largest first. */
  id: string;
  fingerprint: Fingerprint;
  nodes: string[];
}

/** A per-node finding that several nodes share, with the nodes it fired on. */
export interface MergedFinding extends Finding {
  nodes: string[];
}

export interface FleetNodeSummary {
  node: string;
  status: NodeStatus;
  reason: string | null;
  group: string | null;
  durationMs: number | null;
  errors: number;
  warnings: number;
  infos: number;
  /** Rule ids that fired on this node, by severity order. */
  ruleIds: string[];
  source?: string;
  /** Kubernetes: the node's nvidia.com/* labels (GPU Feature Discovery, the device plugin). */
  nvidiaLabels?: Record<string, string>;
}

/** Which reference drift was measured from (fleet/reference.ts builds it). */
export interface ReferenceSummary {
  kind: "majority" | "baseline";
  /** The baseline file; null for the majority. */
  source: string | null;
  /** One line for the report. */
  description: string;
}

export interface FleetReport {
  /** How the nodes were reached: "slurm", "kube", "snapshots". */
  transport: string;
  mode: "doctor" | "scan" | "validate";
  /** What drift was measured from: the --baseline, or the majority (named). */
  reference: ReferenceSummary;
  nodes: FleetNodeSummary[];
  groups: NodeGroup[];
  /** Drift and node-state findings, each with the nodes concerned. */
  fleetFindings: MergedFinding[];
  /** Per-node doctor findings, deduplicated across nodes. */
  nodeFindings: MergedFinding[];
  summary: {
    nodes: number;
    ok: number;
    notOk: number;
    groups: number;
    errors: number;
    warnings: number;
    infos: number;
    exitCode: number;
  };
}
