/**
 * Gathering for `gpuprep fleet`: the doctor probe on every node through a fleet transport, each
 * node's answer turned into Facts or a per-node result that says why there are none. One node's
 * failure, hang or garbage never stops the others.
 */
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, type Facts, type ProjectFacts } from "../facts/schema.js";
import { UserError, errorMessage } from "../errors.js";
import { makeEnvelope } from "../json-envelope.js";
import type { FleetTransport, NodeRun } from "../transports/fleet-types.js";
import type { Transport } from "../transports/types.js";
import type { NodeResult } from "./types.js";
import { knownExtensionArgs, parseProbeResult, probeSource } from "../gather/probe.js";
import { notScanned } from "../gather/binaries.js";

export interface FleetGatherOptions {
  fast: boolean;
  importChecks: string[];
  /** Per-node limit: the probe's own budget plus the interpreter's start. */
  nodeTimeoutMs: number;
  /** Passed to every node's probe; only output framed with it is taken as a probe result. */
  probeNonce: string;
  /** The project checked on every node (read once, here: it is the same checkout). */
  project: ProjectFacts | null;
}

/**
 * The torch and extension children's limit on a node: three quarters of --node-timeout, so the
 * probe reports a hung import before the node's kill. Not capped at doctor's 60 s: an admin who
 * raises --node-timeout for a slow shared filesystem raises the import limit with it (issue 26).
 */
function nodeChildTimeoutSeconds(nodeTimeoutMs: number): number {
  return Math.max(1, Math.floor((nodeTimeoutMs * 0.75) / 1000));
}

export function probeArgs(
  options: Pick<FleetGatherOptions, "fast" | "importChecks" | "nodeTimeoutMs" | "probeNonce">,
): string[] {
  // The nonce is in the script's frame header (probeSource(nonce)), never in argv.
  const args = [
    "--child-timeout",
    String(nodeChildTimeoutSeconds(options.nodeTimeoutMs)),
    // Passive GPU health (ECC, row remaps, throttling, Xids, ...): read-only and ~0.1 s per node.
    "--gpu-health",
  ];
  if (options.fast) args.unshift("--fast");
  args.push(...knownExtensionArgs());
  for (const module of options.importChecks) args.push("--import", module);
  return args;
}

/** The single-host view of one node, for the probe parser's messages. */
function nodeTransport(fleet: FleetTransport, node: string): Transport {
  return {
    kind: fleet.kind,
    ref: node,
    python: fleet.python,
    describe: () => `${fleet.python} on node ${node}`,
    runPython: () => Promise.reject(new Error("not used")),
    runProgram: () => Promise.reject(new Error("not used")),
  };
}

/**
 * Exit 127 is "cannot execute": the shell found no such program, or the program's dynamic loader
 * failed (a conda or pyenv Python without its libpython). The loader's own line says which.
 */
function cannotStart(fleet: FleetTransport, run: NodeRun): string | null {
  const result = run.result;
  if (result?.code !== 127) return null;
  const lines = result.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const loader = lines.find((l) =>
    /error while loading shared libraries|cannot open shared object|GLIBC_[\d.]+' not found/.test(l),
  );
  if (loader) return `${fleet.python} cannot start there (exit 127): ${loader.slice(0, 300)}`;
  const last = lines.at(-1);
  return `${fleet.python} not found there (exit 127)${last ? `: ${last.slice(0, 200)}` : ""}`;
}

export function nodeResultFromRun(
  fleet: FleetTransport,
  run: NodeRun,
  options: FleetGatherOptions,
  capturedAt: string,
): NodeResult {
  const base = { node: run.node, durationMs: run.durationMs, ...(run.labels ? { labels: run.labels } : {}) };
  if (run.state !== "ran" || run.result === null) {
    return { ...base, status: run.state === "ran" ? "failed" : run.state, reason: run.reason, facts: null };
  }
  const notStarted = cannotStart(fleet, run);
  if (notStarted) return { ...base, status: "failed", reason: notStarted, facts: null };
  const transport = nodeTransport(fleet, run.node);
  try {
    const probe = parseProbeResult(transport, run.result, options.nodeTimeoutMs, options.probeNonce);
    const facts: Facts = {
      // No kbOverlay: the overlay holds torch builds, which nothing gathered depends on.
      ...makeEnvelope(FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, null),
      capturedAt,
      target: { kind: fleet.kind, ref: run.node, python: fleet.python },
      host: probe.host,
      python: probe.python,
      project: options.project,
      binaries: notScanned(
        `the probe ran on ${fleet.kind} node ${run.node}; binaries are scanned only locally`,
      ),
    };
    return { ...base, status: "ok", reason: null, facts };
  } catch (error) {
    const message = error instanceof UserError ? error.message : `unexpected: ${errorMessage(error)}`;
    // Exit 0 with no usable result: something answered, but not our probe.
    const garbage = run.result.code === 0;
    return { ...base, status: garbage ? "garbage" : "failed", reason: message.slice(0, 400), facts: null };
  }
}

export async function gatherFleetFacts(
  fleet: FleetTransport,
  options: FleetGatherOptions,
): Promise<NodeResult[]> {
  const runs = await fleet.runPythonOnNodes(
    probeSource(options.probeNonce),
    probeArgs(options),
    options.nodeTimeoutMs,
  );
  const capturedAt = new Date().toISOString();
  return runs.map((run) => nodeResultFromRun(fleet, run, options, capturedAt));
}
