/**
 * Starting probe.py through a transport, without the Facts schema: doctor starts the probe
 * before it loads anything else, because torch's import in the probe is the long pole and every
 * module loaded before the spawn adds to the total (issue 17). probe.ts checks the result.
 */
import { readFileSync } from "node:fs";
import type { RunResult, Transport } from "../transports/types.js";
import { frameChannel, scriptChannel } from "../transports/payload-frame.js";
import { importChecks } from "../kb/import-checks.js";

let probeScript: string | null = null;
/**
 * probe.py's text; with `nonce`, headed by the frame channel that carries it in the script itself
 * (fleet: one nonce for every node, and the script is what reaches each node privately).
 */
export function probeSource(nonce?: string): string {
  probeScript ??= readFileSync(new URL("../probe/probe.py", import.meta.url), "utf8");
  return nonce === undefined ? probeScript : scriptChannel(nonce).header + probeScript;
}

export interface ProbeRunOptions {
  fast: boolean;
  /** Module names the probe import-checks in a child process each, beside the known extensions. */
  importChecks?: string[];
  /** Limit for the whole probe run; each risky child inside gets a share of it. */
  timeoutMs: number;
}

/**
 * `--extensions "MODULE=DIST,... ..."` from the KB's import-checks table: the probe import-checks
 * those it finds installed, of the rows marked for doctor (validate checks every row). One word,
 * so -v shows a short line.
 */
export function knownExtensionArgs(): string[] {
  return [
    "--extensions",
    importChecks()
      .filter((row) => row.doctor)
      .map((row) => `${row.module}=${row.distributions.join(",")}`)
      .join(" "),
  ];
}

/** Each torch/extension child may use most of the budget, leaving the probe time to report it. */
export function childTimeoutSeconds(timeoutMs: number): number {
  return Math.max(1, Math.min(60, Math.floor((timeoutMs * 0.75) / 1000)));
}

interface StartedProbe {
  /** The nonce this run's result line is framed with. */
  nonce: string;
  result: Promise<RunResult>;
}

export function startProbe(transport: Transport, options: ProbeRunOptions): StartedProbe {
  // The nonce goes on the frame channel (fd 3 here, the script text elsewhere), never in argv.
  const channel = frameChannel(transport);
  const args = ["--child-timeout", String(childTimeoutSeconds(options.timeoutMs))];
  if (options.fast) args.unshift("--fast");
  args.push(...knownExtensionArgs());
  for (const module of options.importChecks ?? []) args.push("--import", module);
  return {
    nonce: channel.nonce,
    result: transport.runPython(channel.header + probeSource(), args, options.timeoutMs, channel.runOptions),
  };
}
