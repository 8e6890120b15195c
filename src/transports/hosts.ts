/**
 * Clusters without a scheduler: the same framed probe on a list of hosts (`--hosts 'gpu[01-16]'`),
 * over ssh with at most --fanout connections at once, or through pdsh or ClusterShell's clush
 * where installed (they fan out themselves and prefix each line with the host, as srun --label
 * prefixes the rank). The node wrapper (node-frame.ts) enforces the same per-node limit and framing
 * as on Slurm, so results, states and reasons are the same.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { UserError } from "../errors.js";
import type { FleetTransport, NodeRun } from "./fleet-types.js";
import {
  newNonce,
  nodeRunFromFrame,
  nodeWrapperArgv,
  parseFrames,
  pythonBootstrap,
  NODE_STDOUT_CAP,
} from "./node-frame.js";
import { CommandNotFoundError, runCommand, shellQuote } from "./spawn.js";
import { firstMeaningfulLine } from "./tool-error.js";
import type { RunResult } from "./types.js";

type HostsLauncher = "auto" | "ssh" | "pdsh" | "clush";

export interface HostsSelection {
  /** Host names, expanded from the hostlist the user gave. */
  hosts: string[];
  launcher: HostsLauncher;
  /** Most connections at once. */
  fanout: number;
  /** An ssh client configuration (ssh -F FILE), for host aliases, users, keys, ports. */
  sshConfig?: string;
}

interface HostsTransportOptions {
  selection: HostsSelection;
  python: string;
  /** Extra seconds beyond the per-node limit for the connection and the frames. */
  connectGraceSeconds?: number;
}

function onPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return (env["PATH"] ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || ".", command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** auto: pdsh, else clush, else plain ssh; a named launcher that is missing is an error. */
function pickLauncher(
  wanted: HostsLauncher,
  env: NodeJS.ProcessEnv = process.env,
): Exclude<HostsLauncher, "auto"> {
  if (wanted !== "auto") {
    if (!onPath(wanted, env))
      throw new UserError(
        `--launcher ${wanted}: ${wanted} is not on PATH`,
        "install it, or use --launcher ssh",
      );
    return wanted;
  }
  if (onPath("pdsh", env)) return "pdsh";
  if (onPath("clush", env)) return "clush";
  return "ssh";
}

/** ssh's options: never prompt (a password prompt would hang the run), fail fast on a dead host. */
function sshOptions(selection: HostsSelection): string[] {
  return [
    ...(selection.sshConfig ? ["-F", selection.sshConfig] : []),
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=15",
  ];
}

async function run(
  command: string,
  args: string[],
  timeoutMs: number,
  capBytes: number,
  env?: NodeJS.ProcessEnv,
): Promise<RunResult> {
  try {
    return await runCommand(command, args, { timeoutMs, stdoutCapBytes: capBytes, ...(env ? { env } : {}) });
  } catch (error) {
    if (error instanceof CommandNotFoundError)
      throw new UserError(
        `${command} is not installed or not on PATH`,
        "install an OpenSSH client, or pass --launcher",
      );
    throw error;
  }
}

/** What one host's ssh gave: its frame, or why there is none (ssh's own error line). */
function runFromSsh(host: string, result: RunResult, nonce: string, limitSeconds: number): NodeRun {
  const frame = parseFrames(result.stdout, nonce, false).frames.get("0");
  if (frame) return nodeRunFromFrame(host, frame, limitSeconds, result.timedOut);
  const reason = result.timedOut
    ? `no answer within the ${limitSeconds}s per-node limit (the connection hung)`
    : `ssh: ${firstMeaningfulLine(result.stderr) ?? `exit ${String(result.code)}`}`;
  return {
    node: host,
    state: result.timedOut ? "hung" : "unreachable",
    reason: reason.slice(0, 300),
    result: null,
    durationMs: null,
  };
}

/** Plain ssh, at most `fanout` at once. */
async function viaSsh(
  selection: HostsSelection,
  remote: string,
  nonce: string,
  limitSeconds: number,
  timeoutMs: number,
): Promise<NodeRun[]> {
  const runs: NodeRun[] = new Array<NodeRun>(selection.hosts.length);
  let next = 0;
  const worker = async () => {
    while (next < selection.hosts.length) {
      const index = next++;
      const host = selection.hosts[index] as string;
      const result = await run(
        "ssh",
        [...sshOptions(selection), "--", host, remote],
        timeoutMs,
        NODE_STDOUT_CAP * 2,
      );
      runs[index] = runFromSsh(host, result, nonce, limitSeconds);
    }
  };
  await Promise.all(Array.from({ length: Math.min(selection.fanout, selection.hosts.length) }, worker));
  return runs;
}

/** pdsh or clush: one process for every host; lines come back as "host: line". */
async function viaFanoutTool(
  tool: "pdsh" | "clush",
  selection: HostsSelection,
  remote: string,
  nonce: string,
  limitSeconds: number,
  timeoutMs: number,
): Promise<NodeRun[]> {
  const hosts = selection.hosts.join(",");
  const ssh = sshOptions(selection).map(shellQuote).join(" ");
  const perHost = String(Math.ceil(timeoutMs / 1000));
  const [args, env] =
    tool === "pdsh"
      ? [
          ["-R", "ssh", "-f", String(selection.fanout), "-u", perHost, "-w", hosts, remote],
          { ...process.env, PDSH_SSH_ARGS_APPEND: ssh },
        ]
      : [["-f", String(selection.fanout), "-u", perHost, "-o", ssh, "-w", hosts, remote], undefined];
  const cap = Math.min(selection.hosts.length * 4 * 1024 * 1024, 1024 ** 3);
  const result = await run(tool, args, timeoutMs + 30_000, cap, env);
  const { frames } = parseFrames(result.stdout, nonce, "host");
  const complaints = result.stderr.split("\n").filter((l) => l.trim() !== "");
  return selection.hosts.map((host): NodeRun => {
    const frame = frames.get(host);
    if (frame) return nodeRunFromFrame(host, frame, limitSeconds, result.timedOut);
    const complaint = complaints.find((l) => l.includes(`${host}:`) || l.includes(` ${host} `));
    return {
      node: host,
      state: result.timedOut ? "hung" : "unreachable",
      reason: (complaint
        ? `${tool}: ${complaint.replace(/^(pdsh@[^:]+|clush): /, "")}`
        : `${tool} got nothing from it`
      ).slice(0, 300),
      result: null,
      durationMs: null,
    };
  });
}

export function hostsTransport(options: HostsTransportOptions): FleetTransport {
  const { selection, python } = options;
  if (selection.hosts.length === 0) throw new UserError("--hosts names no host", "e.g. --hosts 'gpu[01-16]'");
  let launcher: Exclude<HostsLauncher, "auto"> | null = null;
  return {
    kind: "ssh",
    python,
    describe: () =>
      `${selection.hosts.length} host${selection.hosts.length === 1 ? "" : "s"} over ${launcher ?? selection.launcher} (fan-out ${selection.fanout})`,
    async runPythonOnNodes(script, args, nodeTimeoutMs) {
      launcher = pickLauncher(selection.launcher);
      const limitSeconds = Math.ceil(nodeTimeoutMs / 1000);
      const nonce = newNonce();
      const command = nodeWrapperArgv(nonce, limitSeconds, [python, "-c", pythonBootstrap(script), ...args]);
      // The remote shell runs one command line: every word quoted for it.
      const remote = command.map(shellQuote).join(" ");
      const timeoutMs = (limitSeconds + (options.connectGraceSeconds ?? 30)) * 1000;
      if (launcher === "ssh") return viaSsh(selection, remote, nonce, limitSeconds, timeoutMs);
      return viaFanoutTool(launcher, selection, remote, nonce, limitSeconds, timeoutMs);
    },
  };
}
