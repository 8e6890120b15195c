/**
 * The stable key of a snapshot file straight from its text, for 10,000 files: the volatile values
 * (volatile.ts) blanked in place by one scan, without parsing the 60 KB document and writing it out
 * again (JSON.parse and JSON.stringify of every file were two thirds of a 10,000-node merge).
 *
 * Safe by construction: a file takes this path only when its volatile keys occur in exactly the
 * places, and the order, of an already validated file with the same blanked text (its "slots",
 * found by walking that file's parsed JSON); anything else (a key spelt inside a free-form name, a
 * field gpuprep does not know) makes the slots differ and the file is read in full.
 */
/** The volatile keys; a match inside a string can only add a slot, which sends the file the slow way. */
const VOLATILE_KEY =
  /"(capturedAt|ref|hostname|memAvailableBytes|freeBytes|kernelModule|uuid|durationMs|gpuHealth)"\s*:\s*/g;
const VOLATILE_KEYS = new Set([
  "capturedAt",
  "ref",
  "hostname",
  "memAvailableBytes",
  "freeBytes",
  "kernelModule",
  "uuid",
  "durationMs",
  "gpuHealth",
]);

/** Where a volatile key may stand: its path, indices as "#". */
const KNOWN_PATHS = new Set([
  "capturedAt",
  "target.ref",
  "host.hostname",
  "host.memAvailableBytes",
  "host.shm.freeBytes",
  "host.nvidia.kernelModule",
  "host.nvidia.gpus.#.uuid",
  "host.gpuHealth",
  "python.probe.durationMs",
  "python.torchLive.durationMs",
  "python.extensions.#.durationMs",
  "binaries.durationMs",
]);

export interface Slot {
  key: string;
  /** "host.nvidia.gpus.#.uuid" */
  path: string;
  /** The array index where the path has one. */
  index: number | null;
}

export interface TextSplit {
  /** The text with each volatile value replaced by its kind: #s, #n, #o, or null as it was. */
  stable: string;
  keys: string[];
  /** Each value's JSON text, in document order. */
  values: string[];
}

/** The end (exclusive) of the JSON value starting at `start`, or -1. */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') {
    for (let i = start + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) return i + 1;
    }
    return -1;
  }
  if (first === "{" || first === "[") {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i = valueEnd(text, i) - 1;
        if (i < 0) return -1;
      } else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  const scalar = /^(null|true|false|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(start, start + 40));
  return scalar ? start + (scalar[0]?.length ?? 0) : -1;
}

function kindOf(value: string): string {
  if (value === "null") return "null";
  const first = value[0];
  return first === '"' ? "#s" : first === "{" || first === "[" ? "#o" : "#n";
}

/** One scan over the text; null when a value cannot be delimited (the full parse says why). */
export function splitVolatileText(text: string): TextSplit | null {
  const parts: string[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  let last = 0;
  VOLATILE_KEY.lastIndex = 0;
  for (let match = VOLATILE_KEY.exec(text); match; match = VOLATILE_KEY.exec(text)) {
    const start = match.index + match[0].length;
    const end = valueEnd(text, start);
    if (end < 0) return null;
    const value = text.slice(start, end);
    keys.push(match[1] ?? "");
    values.push(value);
    parts.push(text.slice(last, start), kindOf(value));
    last = end;
    VOLATILE_KEY.lastIndex = end;
  }
  parts.push(text.slice(last));
  return { stable: parts.join(""), keys, values };
}

/** The volatile keys of a parsed document in document order, with their paths; null if one is where none belongs. */
export function slotsOf(data: unknown): Slot[] | null {
  const slots: Slot[] = [];
  let known = true;
  const walk = (value: unknown, path: string[], index: number | null) => {
    if (!known || typeof value !== "object" || value === null) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...path, "#"], i));
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      if (VOLATILE_KEYS.has(key)) {
        const where = [...path, key].join(".");
        if (!KNOWN_PATHS.has(where)) known = false;
        slots.push({ key, path: where, index: where.includes("#") ? index : null });
        continue;
      }
      walk(child, [...path, key], index);
    }
  };
  walk(data, [], null);
  return known ? slots : null;
}

interface Target {
  kind: string;
  ref: string | null;
  python: string;
}

/** volatile.ts's raw volatile shape, as read from one file's text. */
interface RawVolatile {
  capturedAt: unknown;
  target: Record<string, unknown>;
  hostname: unknown;
  memAvailableBytes: unknown;
  shmFreeBytes: unknown;
  kernelModule: unknown;
  uuids: unknown[];
  gpuHealth: unknown;
  probeMs: unknown;
  torchLiveMs: unknown;
  extensionMs: unknown[];
  binariesMs: unknown;
}

/** Where each known path's value goes in the raw shape (an array's by the slot's index). */
const PLACE_BY_PATH: Record<string, (raw: RawVolatile, value: unknown, index: number) => void> = {
  capturedAt: (raw, value) => (raw.capturedAt = value),
  "target.ref": (raw, value) => (raw.target["ref"] = value),
  "host.hostname": (raw, value) => (raw.hostname = value),
  "host.memAvailableBytes": (raw, value) => (raw.memAvailableBytes = value),
  "host.shm.freeBytes": (raw, value) => (raw.shmFreeBytes = value),
  "host.nvidia.kernelModule": (raw, value) => (raw.kernelModule = value),
  "host.nvidia.gpus.#.uuid": (raw, value, index) => (raw.uuids[index] = value),
  "host.gpuHealth": (raw, value) => (raw.gpuHealth = value),
  "python.probe.durationMs": (raw, value) => (raw.probeMs = value),
  "python.torchLive.durationMs": (raw, value) => (raw.torchLiveMs = value),
  "python.extensions.#.durationMs": (raw, value, index) => (raw.extensionMs[index] = value),
  "binaries.durationMs": (raw, value) => (raw.binariesMs = value),
};

/**
 * The values of one file as volatile.ts's raw volatile shape (checked there), read by the slots of
 * the validated file it matched; null when they do not line up.
 */
export function volatileFromText(split: TextSplit, slots: readonly Slot[], target: Target): unknown {
  if (split.keys.length !== slots.length) return null;
  const raw: RawVolatile = {
    capturedAt: undefined,
    target: { ...target },
    hostname: undefined,
    memAvailableBytes: undefined,
    shmFreeBytes: null,
    kernelModule: null,
    uuids: [],
    gpuHealth: undefined,
    probeMs: undefined,
    torchLiveMs: undefined,
    extensionMs: [],
    binariesMs: undefined,
  };
  for (const [i, slot] of slots.entries()) {
    if (split.keys[i] !== slot.key) return null;
    const value: unknown = JSON.parse(split.values[i] ?? "null");
    if (!Object.hasOwn(PLACE_BY_PATH, slot.path)) return null;
    PLACE_BY_PATH[slot.path]!(raw, value, slot.index ?? 0);
  }
  return raw;
}
