/** A carrier that runs one command on many nodes at once (Slurm, Kubernetes) and reports per node. */
import type { RunResult } from "./types.js";

/**
 * ran: the command ran to an exit status (its RunResult says how it went);
 * down: the scheduler reports the node down / drained / not responding, so it was not asked;
 * unreachable: it was asked but never started the command (launch failed, pod never scheduled);
 * hung: it started but did not finish within the per-node limit and was killed or abandoned;
 * failed: the node itself failed while the command ran (the scheduler's "node failure").
 */
type NodeRunState = "ran" | "down" | "unreachable" | "hung" | "failed";

export interface NodeRun {
  node: string;
  state: NodeRunState;
  /** One line: why it is not "ran" (the scheduler's state and reason, srun's error). */
  reason: string | null;
  result: RunResult | null;
  durationMs: number | null;
  /** Kubernetes: the node's labels (GPU Feature Discovery's nvidia.com/* among them). */
  labels?: Record<string, string>;
}

export interface FleetTransport {
  kind: "slurm" | "kube" | "ssh";
  /** "Slurm partition gpu (srun)", "Kubernetes context prod". */
  describe(): string;
  /** The Python command on the nodes ("python3", a venv's python, the image's python). */
  python: string;
  /** Runs `python SCRIPT ARGS` on every selected node; never throws for one node's failure. */
  runPythonOnNodes(script: string, args: string[], nodeTimeoutMs: number): Promise<NodeRun[]>;
}
