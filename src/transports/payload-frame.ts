/**
 * The one payload frame (issue 23 item 5, issue 28 deliver 5): the probe, validate and memory
 * each end with ONE line "@gpuprep-frame NONCE PAYLOAD JSON" written by src/probe/frame.py, and
 * this is its one reader. The nonce travels on a channel of its own, never in argv or the
 * environment: a pipe at fd 3 on this machine, the script text itself (which arrives on stdin)
 * elsewhere; frame.py says why. The first valid frame wins: an atexit hook prints after the
 * payload. Also here: the table of payload error kinds both sides read.
 */
import { readFileSync } from "node:fs";
import { newNonce } from "./node-frame.js";
import type { PythonRunOptions, Transport } from "./types.js";

export const FRAME_TAG = "@gpuprep-frame";
type PayloadName = "probe" | "validate" | "memory";

/** The fd the local transport hands the nonce on (stdin, stdout, stderr come first). */
const SECRET_FD = 3;

interface FrameChannel {
  nonce: string;
  /** The first line of the payload's script: where frame.py finds the nonce. */
  header: string;
  /** What runPython needs to carry the nonce (the secret fd, locally). */
  runOptions: PythonRunOptions;
}

/** A fresh nonce and the way to hand it to a payload run through `transport`. */
export function frameChannel(transport: Pick<Transport, "kind">): FrameChannel {
  const nonce = newNonce();
  return nonceChannel(nonce, transport.kind === "local");
}

/** The channel for a nonce made elsewhere (fleet: one nonce for every node, in the script text). */
export function scriptChannel(nonce: string): FrameChannel {
  return nonceChannel(nonce, false);
}

function nonceChannel(nonce: string, viaFd: boolean): FrameChannel {
  const where = viaFd ? `fd:${SECRET_FD}` : `nonce:${nonce}`;
  return {
    nonce,
    header: `GPUPREP_FRAME_CHANNEL = ${JSON.stringify(where)}\n`,
    runOptions: viaFd ? { secret: nonce } : {},
  };
}

/**
 * The JSON object of the first line framed with `nonce` for `payload`, or null when there is
 * none. A line with this nonce whose JSON does not parse, or is not an object, is not a frame.
 */
export function readFrame(
  stdout: string,
  nonce: string,
  payload: PayloadName,
): Record<string, unknown> | null {
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) return null;
  const prefix = `${FRAME_TAG} ${nonce} ${payload} `;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    try {
      const value: unknown = JSON.parse(line.slice(prefix.length));
      if (typeof value === "object" && value !== null && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // not a frame: look further
    }
  }
  return null;
}

interface PayloadErrorKind {
  /** The user's input is wrong: the command stops with `hint`. Otherwise it is one run's failure. */
  input: boolean;
  hint: string | null;
}

let kinds: Record<string, PayloadErrorKind> | null = null;

/** src/probe/payload-errors.json: the error kinds a payload reports; memory.py reads the same file. */
export function payloadErrorKinds(): Record<string, PayloadErrorKind> {
  kinds ??= (
    JSON.parse(readFileSync(new URL("../probe/payload-errors.json", import.meta.url), "utf8")) as {
      kinds: Record<string, PayloadErrorKind>;
    }
  ).kinds;
  return kinds;
}
