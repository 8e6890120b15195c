/**
 * How one command runs on many nodes at once and each node's output comes back whole.
 *
 * The carrier (srun, a Kubernetes pod log) mixes the nodes' lines and may cut long ones (srun
 * --label splits lines at 1024 bytes), so every node runs the same small POSIX sh wrapper: it
 * runs the command under `timeout -s KILL`, keeps its stdout (capped) and the tail of its stderr
 * in files, and prints them as base64 (gzipped where gzip exists) in short lines, each tagged
 * with a per-run nonce. Whatever the command prints, it cannot forge or break a frame: only the
 * wrapper writes frame lines, and the command's bytes reach us only inside base64.
 */
import { gunzipSync } from "node:zlib";
import { deflateSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import type { RunResult } from "./types.js";
import type { NodeRun } from "./fleet-types.js";
import { CWD_IMPORT_GUARD } from "./python-guard.js";

/** stdout kept per node; a probe result is ~50-200 KB. */
export const NODE_STDOUT_CAP = 32 * 1024 * 1024;
const NODE_STDERR_TAIL = 16 * 1024;
/** base64 characters per frame line: well under srun's 1024-byte line pieces with a label. */
const CHUNK = 700;

export function newNonce(): string {
  return randomBytes(9).toString("hex");
}

/**
 * sh -c WRAPPER gpuprep-node NONCE LIMIT_SECONDS COMMAND...
 * Always exits 0: a node's failure is reported in its frame, so the carrier never stops the
 * other nodes because of it (srun --kill-on-bad-exit).
 */
const NODE_WRAPPER = `nonce=$1; limit=$2; shift 2
node=\${SLURMD_NODENAME:-\${GPUPREP_NODE:-$(uname -n)}}
say() { printf '@gpuprep %s %s\\n' "$nonce" "$*"; }
now() { t=$(date +%s%3N 2>/dev/null); case $t in ''|*[!0-9]*) t=0;; esac; echo "$t"; }
say begin "$node"
d=$(mktemp -d "\${TMPDIR:-/tmp}/gpuprep-node.XXXXXX") || { say fail mktemp; say end; exit 0; }
ef=/dev/null
if mkfifo "$d/ef" 2>/dev/null; then ef=$d/ef; tail -c ${NODE_STDERR_TAIL} <"$ef" >"$d/e" & else : >"$d/e"; fi
if command -v timeout >/dev/null 2>&1; then set -- timeout -s KILL "$limit" "$@"; fi
start=$(now)
{ "$@" </dev/null 2>"$ef"; echo $? >"$d/rc"; } | head -c ${NODE_STDOUT_CAP} >"$d/o"
wait
end=$(now)
say rc "$(cat "$d/rc" 2>/dev/null || echo -)" "$((end - start))"
for s in o e; do
  if command -v gzip >/dev/null 2>&1 && gzip -c <"$d/$s" >"$d/$s.gz" 2>/dev/null; then say enc $s gzip; f=$d/$s.gz; else say enc $s raw; f=$d/$s; fi
  base64 <"$f" | tr -d '\\n' | fold -w ${CHUNK} | sed "s/^/@gpuprep $nonce $s /"
  echo
done
say end
rm -rf "$d"
exit 0`;

export function nodeWrapperArgv(nonce: string, limitSeconds: number, command: string[]): string[] {
  return [
    "sh",
    "-c",
    NODE_WRAPPER,
    "gpuprep-node",
    nonce,
    String(Math.max(1, Math.ceil(limitSeconds))),
    ...command,
  ];
}

/**
 * Python code for `python -c`: writes the script (compressed in the argument) to a temporary file
 * and runs it as __main__, so scripts that re-run themselves through __file__ (validate.py) work
 * where no copy of gpuprep exists. Python >= 3.8, stdlib only.
 */
export function pythonBootstrap(script: string): string {
  const packed = deflateSync(Buffer.from(script, "utf8"), { level: 9 }).toString("base64");
  return [
    CWD_IMPORT_GUARD,
    "import base64, os, runpy, shutil, sys, tempfile, zlib",
    'd = tempfile.mkdtemp(prefix="gpuprep-")',
    'p = os.path.join(d, "gpuprep_main.py")',
    `open(p, "wb").write(zlib.decompress(base64.b64decode("${packed}")))`,
    "sys.argv = [p] + sys.argv[1:]",
    "try:",
    '    runpy.run_path(p, run_name="__main__")',
    "finally:",
    "    shutil.rmtree(d, ignore_errors=True)",
  ].join("\n");
}

/** One node's output, as its wrapper framed it. */
interface NodeFrame {
  /** The node's own name (SLURMD_NODENAME, the pod's node, uname -n). */
  node: string | null;
  /** The command's exit status; null when the frame was cut off before it finished. */
  exitCode: number | null;
  durationMs: number | null;
  stdout: string;
  stderr: string;
  /** The frame closed normally (begin ... end). */
  complete: boolean;
  /** The wrapper could not even start (no temp dir). */
  failure: string | null;
  /** A frame whose data could not be decoded (cut off, not base64, not gzip). */
  decodeError: string | null;
}

interface Partial {
  node: string | null;
  exitCode: number | null;
  durationMs: number | null;
  enc: Record<"o" | "e", string>;
  chunks: Record<"o" | "e", string[]>;
  size: number;
  complete: boolean;
  failure: string | null;
}

/**
 * The carrier's own prefix on each line: srun --label's task rank ("12: "), pdsh's and clush's
 * host name ("gpu07: "), or none (one node per stream: ssh, a pod log).
 */
const LABELS = { rank: /^\s*(\d+): /, host: /^([^\s:]+): / } as const;
type FrameLabel = keyof typeof LABELS | "none";

/**
 * Frames by key: the srun task rank or the host name the carrier prefixed, else "0" (one node per
 * stream). Lines that are not ours (the carrier's own messages, a banner) are returned apart.
 * Never throws. `labelled: true` is "rank" (srun), false is "none".
 */
export function parseFrames(
  text: string,
  nonce: string,
  labelled: boolean | FrameLabel,
): { frames: Map<string, NodeFrame>; otherLines: string[] } {
  const mode: FrameLabel = labelled === true ? "rank" : labelled === false ? "none" : labelled;
  const partials = new Map<string, Partial>();
  const otherLines: string[] = [];
  const keepOther = (line: string): void => {
    if (line.trim() !== "" && otherLines.length < 1000) otherLines.push(line.slice(0, 500));
  };
  const tag = `@gpuprep ${nonce} `;
  for (const raw of text.split("\n")) {
    const split = withoutLabel(raw, mode);
    // Unlabelled lines come from the batch script or the carrier itself, not from a node.
    if (!split) {
      keepOther(raw);
      continue;
    }
    const { key, line } = split;
    if (!line.startsWith(tag)) {
      keepOther(line);
      continue;
    }
    const rest = line.slice(tag.length);
    const space = rest.indexOf(" ");
    let p = partials.get(key);
    if (!p) {
      p = newPartial();
      partials.set(key, p);
    }
    const kind = space < 0 ? rest : rest.slice(0, space);
    if (Object.hasOwn(FRAME_LINES, kind)) FRAME_LINES[kind]!(p, space < 0 ? "" : rest.slice(space + 1));
  }
  const frames = new Map<string, NodeFrame>();
  for (const [key, p] of partials) frames.set(key, decodeFrame(p));
  return { frames, otherLines };
}

/** The line's frame key and the line after the carrier's label; null when a labelled mode finds none. */
function withoutLabel(line: string, mode: FrameLabel): { key: string; line: string } | null {
  if (mode === "none") return { key: "0", line };
  const label = LABELS[mode].exec(line);
  if (!label) return null;
  return { key: label[1] ?? "0", line: line.slice(label[0].length) };
}

function newPartial(): Partial {
  return {
    node: null,
    exitCode: null,
    durationMs: null,
    enc: { o: "raw", e: "raw" },
    chunks: { o: [], e: [] },
    size: 0,
    complete: false,
    failure: null,
  };
}

/** What each `@gpuprep NONCE KIND VALUE` line adds to its node's frame; other kinds are ignored. */
const FRAME_LINES: Record<string, (p: Partial, value: string) => void> = {
  begin: (p, value) => {
    p.node = value.trim().slice(0, 253) || null;
  },
  rc: (p, value) => {
    const [code, ms] = value.trim().split(/\s+/);
    p.exitCode = code !== undefined && /^\d+$/.test(code) ? Number(code) : null;
    p.durationMs = ms !== undefined && /^\d+$/.test(ms) ? Number(ms) : null;
  },
  enc: (p, value) => {
    const [stream, encoding] = value.trim().split(/\s+/);
    if ((stream === "o" || stream === "e") && encoding) p.enc[stream] = encoding;
  },
  o: (p, value) => addChunk(p, "o", value),
  e: (p, value) => addChunk(p, "e", value),
  fail: (p, value) => {
    p.failure = value.trim().slice(0, 200);
  },
  end: (p) => {
    p.complete = true;
  },
};

function addChunk(p: Partial, stream: "o" | "e", value: string): void {
  // Bounded: base64 of the stdout cap plus the stderr tail, with room for gzip overhead.
  if (p.size < NODE_STDOUT_CAP * 1.5) {
    p.chunks[stream].push(value.trim());
    p.size += value.length;
  }
}

function decodeFrame(p: Partial): NodeFrame {
  let decodeError: string | null = null;
  const stream = (s: "o" | "e"): string => {
    const text = p.chunks[s].join("");
    if (text === "") return "";
    try {
      if (!/^[A-Za-z0-9+/=]*$/.test(text)) throw new Error("not base64");
      const bytes = Buffer.from(text, "base64");
      return (p.enc[s] === "gzip" ? gunzipSync(bytes) : bytes).toString("utf8");
    } catch (error) {
      decodeError ??= `${s === "o" ? "stdout" : "stderr"} frame unreadable (${(error as Error).message})`;
      return "";
    }
  };
  const stdout = stream("o");
  const stderr = stream("e");
  return {
    node: p.node,
    exitCode: p.exitCode,
    durationMs: p.durationMs,
    stdout,
    stderr,
    complete: p.complete,
    failure: p.failure,
    decodeError,
  };
}

/** A complete frame as the RunResult a single-host transport would have returned. */
export function frameRunResult(frame: NodeFrame, limitSeconds: number): RunResult {
  const killed =
    frame.exitCode === 124 ||
    (frame.exitCode === 137 && (frame.durationMs ?? 0) >= limitSeconds * 1000 - 1000);
  return {
    stdout: frame.stdout,
    stderr: frame.stderr,
    code: killed ? null : frame.exitCode,
    signal: killed ? "SIGKILL" : null,
    timedOut: killed,
  };
}

/**
 * One node's frame as a NodeRun: a wrapper that could not start is unreachable, a frame cut off
 * before its end hung (killed at the limit when the carrier was), a frame with unreadable data ran
 * and failed, a complete one ran (or hung, when the wrapper's timeout killed the command).
 */
export function nodeRunFromFrame(
  node: string,
  frame: NodeFrame,
  limitSeconds: number,
  carrierKilled: boolean,
): NodeRun {
  const base = { node, durationMs: frame.durationMs };
  if (frame.failure)
    return {
      ...base,
      state: "unreachable",
      reason: `the node wrapper failed: ${frame.failure}`,
      result: null,
      durationMs: null,
    };
  if (!frame.complete || frame.exitCode === null) {
    return {
      ...base,
      state: "hung",
      reason: carrierKilled
        ? `started but sent no result within the ${limitSeconds}s per-node limit`
        : "its output was cut off before the end",
      result: null,
      durationMs: null,
    };
  }
  if (frame.decodeError) {
    return {
      ...base,
      state: "ran",
      reason: frame.decodeError,
      result: { stdout: "", stderr: frame.decodeError, code: frame.exitCode, signal: null, timedOut: false },
    };
  }
  const result = frameRunResult(frame, limitSeconds);
  return {
    ...base,
    state: result.timedOut ? "hung" : "ran",
    reason: result.timedOut ? `killed at the ${limitSeconds}s per-node limit` : null,
    result,
  };
}
