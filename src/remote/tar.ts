/**
 * A tar stream read front to back (image layers, `docker save` archives): POSIX ustar headers,
 * GNU long names ('L', 'K') and pax extended headers ('x'; 'g' ignored), as OCI layers and
 * `docker save` write them (https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html).
 * Nothing is written to disk; paths are normalised (no leading "/" or "./") and an entry whose
 * path climbs out ("..") is reported, never followed. Bounded: a pax or long-name record of at
 * most 1 MiB, every header's checksum checked.
 */
import { ScanError } from "../fatbin/errors.js";
import { ByteStream } from "./byte-stream.js";

type TarEntryType = "file" | "hardlink" | "symlink" | "directory" | "other";

export interface TarEntry {
  /** Normalised: "usr/lib/x.so", no leading slash. */
  path: string;
  type: TarEntryType;
  size: number;
  /** For links: the target as written (a hardlink's is a path in the archive). */
  linkPath: string | null;
  /** The entry's bytes; read them before asking for the next entry, or they are skipped. */
  body: AsyncIterable<Buffer>;
}

const BLOCK = 512;
const MAX_META = 1024 * 1024;

function corrupt(message: string): ScanError {
  return new ScanError("corrupt", message);
}

function cString(block: Buffer, start: number, length: number): string {
  const end = block.indexOf(0, start);
  return block.toString("utf8", start, end < 0 || end > start + length ? start + length : end);
}

/** An octal field, or GNU's base-256 form (first byte's high bit set) for sizes past 8 GiB. */
function numeric(block: Buffer, start: number, length: number): number {
  if (block[start]! & 0x80) {
    let value = 0;
    for (let i = start + 1; i < start + length; i++) value = value * 256 + block[i]!;
    if (!Number.isSafeInteger(value)) throw corrupt("tar size field too large");
    return value;
  }
  const field = cString(block, start, length).trim();
  if (field === "") return 0;
  if (!/^[0-7]+$/.test(field)) throw corrupt(`tar numeric field "${field.slice(0, 12)}" is not octal`);
  const value = parseInt(field, 8);
  if (!Number.isSafeInteger(value)) throw corrupt("tar numeric field too large");
  return value;
}

function checksumOk(block: Buffer): boolean {
  const stored = numeric(block, 148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  return sum === stored;
}

/** "./usr//lib/x.so" -> "usr/lib/x.so"; null when the path climbs out of the archive's root. */
export function normalizeTarPath(path: string): string | null {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") return null;
    parts.push(part);
  }
  return parts.join("/");
}

/** "path=..." records of a pax header. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(data.toString("latin1", at, space));
    if (!Number.isSafeInteger(length) || length <= space - at || at + length > data.length)
      throw corrupt("pax record length");
    const record = data.toString("utf8", space + 1, at + length - 1);
    const equals = record.indexOf("=");
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    at += length;
  }
  return records;
}

const TYPES: Record<string, TarEntryType> = {
  "0": "file",
  "\0": "file",
  "7": "file",
  "1": "hardlink",
  "2": "symlink",
  "5": "directory",
};

interface TarOptions {
  /** Called for an entry whose path leaves the root: reported and skipped. */
  onUnsafePath?: (path: string) => void;
  maxEntries?: number;
}

/** Every entry of the tar stream, in order. */
export async function* tarEntries(
  source: AsyncIterable<Buffer>,
  options: TarOptions = {},
): AsyncGenerator<TarEntry> {
  const stream = new ByteStream(source);
  const maxEntries = options.maxEntries ?? 10_000_000;
  let longName: string | null = null;
  let longLink: string | null = null;
  let pax = new Map<string, string>();
  let entries = 0;
  try {
    for (;;) {
      if (await stream.atEnd()) return; // some writers omit the two zero blocks
      const block = await stream.read(BLOCK, "tar header");
      if (block.every((byte) => byte === 0)) return;
      if (!checksumOk(block))
        throw corrupt(`tar header at offset ${stream.position - BLOCK} has a bad checksum`);
      const flag = String.fromCharCode(block[156]!);
      const size = Number(pax.get("size") ?? numeric(block, 124, 12));
      if (!Number.isSafeInteger(size) || size < 0) throw corrupt("tar entry size");
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (flag === "x" || flag === "g" || flag === "L" || flag === "K") {
        if (size > MAX_META) throw corrupt(`a tar ${flag} record of ${size} bytes`);
        const data = (await stream.read(padded, "tar extended header")).subarray(0, size);
        if (flag === "x") pax = paxRecords(data);
        else if (flag === "L") longName = cString(data, 0, data.length);
        else if (flag === "K") longLink = cString(data, 0, data.length);
        continue;
      }
      if (++entries > maxEntries) throw corrupt(`more than ${maxEntries} tar entries`);
      const ustar = block.toString("latin1", 257, 262) === "ustar";
      const prefix = ustar ? cString(block, 345, 155) : "";
      const rawPath =
        pax.get("path") ??
        longName ??
        (prefix ? `${prefix}/${cString(block, 0, 100)}` : cString(block, 0, 100));
      const linkPath = pax.get("linkpath") ?? longLink ?? (cString(block, 157, 100) || null);
      pax = new Map();
      longName = null;
      longLink = null;
      const path = normalizeTarPath(rawPath);
      const body = stream.take(size);
      if (padded > size) void stream.take(padded - size); // the padding: skipped with the body
      if (path === null) {
        options.onUnsafePath?.(rawPath);
        continue;
      }
      yield { path, type: TYPES[flag] ?? "other", size, linkPath, body };
    }
  } finally {
    await stream.close();
  }
}

export interface TarIndexEntry {
  offset: number;
  size: number;
  type: TarEntryType;
}

/**
 * The entries of a tar file on disk, found by reading its headers only (each body is skipped by
 * its size): for `docker save` archives, whose layers are read in place. Later entries of one path
 * win, as tar extraction would have it.
 */
export async function indexTarFile(
  reader: { size: number; read(offset: number, length: number, what: string): Promise<Buffer> },
  maxEntries = 1_000_000,
): Promise<Map<string, TarIndexEntry>> {
  const index = new Map<string, TarIndexEntry>();
  let at = 0;
  let pax = new Map<string, string>();
  let longName: string | null = null;
  while (at + BLOCK <= reader.size) {
    const block = await reader.read(at, BLOCK, "tar header");
    if (block.every((byte) => byte === 0)) break;
    if (!checksumOk(block)) throw corrupt(`tar header at offset ${at} has a bad checksum`);
    const flag = String.fromCharCode(block[156]!);
    const size = Number(pax.get("size") ?? numeric(block, 124, 12));
    if (!Number.isSafeInteger(size) || size < 0) throw corrupt("tar entry size");
    const body = at + BLOCK;
    if (body + size > reader.size)
      throw new ScanError("truncated", `tar entry at offset ${at} runs past the end`);
    if (flag === "x" || flag === "g" || flag === "L") {
      if (size > MAX_META) throw corrupt(`a tar ${flag} record of ${size} bytes`);
      const data = await reader.read(body, size, "tar extended header");
      if (flag === "x") pax = paxRecords(data);
      else if (flag === "L") longName = cString(data, 0, data.length);
    } else {
      const ustar = block.toString("latin1", 257, 262) === "ustar";
      const prefix = ustar ? cString(block, 345, 155) : "";
      const raw =
        pax.get("path") ??
        longName ??
        (prefix ? `${prefix}/${cString(block, 0, 100)}` : cString(block, 0, 100));
      const path = normalizeTarPath(raw);
      if (path !== null) index.set(path, { offset: body, size, type: TYPES[flag] ?? "other" });
      if (index.size > maxEntries) throw corrupt(`more than ${maxEntries} tar entries`);
      pax = new Map();
      longName = null;
    }
    at = body + Math.ceil(size / BLOCK) * BLOCK;
  }
  return index;
}
