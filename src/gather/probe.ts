/** Runs probe.py through a transport and turns its one JSON line into checked ProbeOutput. */
import { ProbeOutputSchema, type ProbeOutput } from "../facts/schema.js";
import { UserError } from "../errors.js";
import type { RunResult, Transport } from "../transports/types.js";
import { startProbe, type ProbeRunOptions } from "./probe-run.js";
import { readFrame } from "../transports/payload-frame.js";

/** Exit status probe.py uses for "wrong Python or wrong arguments" (its message is on stderr). */
const PROBE_REFUSED = 3;

export { childTimeoutSeconds, knownExtensionArgs, probeSource, type ProbeRunOptions } from "./probe-run.js";

export async function runProbe(transport: Transport, options: ProbeRunOptions): Promise<ProbeOutput> {
  const started = startProbe(transport, options);
  return parseProbeResult(transport, await started.result, options.timeoutMs, started.nonce);
}

/** `nonce`: the one passed to this run's probe; only a line framed with it is the result. */
export function parseProbeResult(
  transport: Transport,
  result: RunResult,
  timeoutMs: number,
  nonce: string,
): ProbeOutput {
  const who = transport.describe();
  if (result.timedOut) {
    throw new UserError(
      `${who} did not finish the gpuprep probe within ${Math.round(timeoutMs / 1000)}s (killed)`,
      `check that it starts at all: ${transport.python} -c 'print(1)'`,
    );
  }
  if (result.signal) {
    throw new UserError(
      `${who} crashed (${result.signal}) while running the gpuprep probe`,
      `check that it starts at all: ${transport.python} -c 'print(1)'`,
    );
  }
  const data = readFrame(result.stdout, nonce, "probe");
  if (result.code !== 0 || data === null) {
    const reason = lastLine(result.stderr) ?? lastLine(result.stdout);
    if (result.code === PROBE_REFUSED && reason)
      throw new UserError(`${who}: ${reason}`, "pass --python PATH to a Python >= 3.8");
    if (result.code === 127) {
      throw new UserError(
        `${who}: ${transport.python} not found there`,
        "pass --python with the interpreter's path there",
      );
    }
    if (result.code !== 0) {
      throw new UserError(
        `${who} failed to run the gpuprep probe (exit ${result.code})${reason ? `: ${reason}` : ""}`,
        "run the same interpreter by hand to see its full error",
      );
    }
    throw new UserError(
      `${who} printed no gpuprep probe result${reason ? ` (last line: ${reason})` : ""}`,
      "a wrapper script or shell profile may print to stdout, or this is not a Python interpreter",
    );
  }
  const parsed = ProbeOutputSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${who}: probe result does not match the facts schema at ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"}`,
      "this is a gpuprep bug; please report it with the interpreter's version",
    );
  }
  return parsed.data;
}

function lastLine(text: string): string | null {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .at(-1);
  return line ? line.slice(0, 300) : null;
}
