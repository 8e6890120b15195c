/**
 * CUDA fatbin containers inside one ELF section: the container and entry headers only; every
 * payload (cubin, PTX, LTO-IR) is skipped by seeking over it.
 *
 * Layout, as read from nvcc 13.0 output (test/fixtures/fatbin has the builds that pin it down):
 * - container: u32 magic 0xBA55ED50, u16 version, u16 header size (16), u64 size of the entries;
 *   containers follow one another in the section, sometimes with zero padding between them.
 * - entry: u16 kind (1 PTX, 2 ELF cubin, 8 LTO-IR), u16 version, u32 header size (64..120),
 *   u64 payload size (padded), u32 compressed size, u32, u16 ISA minor, u16 ISA major,
 *   u32 SM number (90, 100, 121), u32 name offset, u32 name length, u64 flags, u64, u64
 *   uncompressed size.
 * - flags: 0x1 64-bit, 0x10 Linux, 0x2000 LZ4-compressed, 0x8000 ZSTD-compressed,
 *   0x100000 arch-specific target (sm_90a), 0x200000 family-specific target (sm_100f).
 */
import type { ByteSource } from "./file-reader.js";
import { ScanError } from "./errors.js";

export const FATBIN_MAGIC = 0xba55ed50;
const CONTAINER_HEADER_MIN = 16;
const ENTRY_HEADER_MIN = 64;
/** Real headers are at most 120 bytes; anything far beyond is a corrupt length. */
const ENTRY_HEADER_MAX = 4096;
/** Bounds work on hostile input; libtorch_cuda.so has ~2,800 entries. */
const MAX_ENTRIES_PER_SECTION = 1_000_000;
const PADDING_WINDOW = 4096;

const FLAG_LZ4 = 0x2000n;
const FLAG_ZSTD = 0x8000n;
const FLAG_ARCH_SPECIFIC = 0x100000n;
const FLAG_FAMILY_SPECIFIC = 0x200000n;

type EntryKind = "sass" | "ptx" | "lto-ir" | "other";

export interface FatbinEntry {
  kind: EntryKind;
  /** sm_90, sm_90a, sm_100f for SASS; compute_90, compute_120a for PTX; lto_90 for LTO-IR. */
  target: string;
  sm: number;
  variant: "" | "a" | "f";
  compression: "none" | "lz4" | "zstd";
  /** Bytes the payload occupies in the file (compressed, padded). */
  payloadBytes: number;
  /** Size once decompressed; null when the entry is stored uncompressed. */
  uncompressedBytes: number | null;
  /** The ELF section it came from (.nv_fatbin, __nv_relfatbin). */
  section: string;
}

const KIND_BY_CODE: Record<number, EntryKind> = { 1: "ptx", 2: "sass", 8: "lto-ir" };
const PREFIX_BY_KIND: Record<EntryKind, string> = {
  sass: "sm_",
  ptx: "compute_",
  "lto-ir": "lto_",
  other: "kind?_",
};

function describeEntry(header: Buffer, payloadBytes: number, section: string): FatbinEntry {
  const code = header.readUInt16LE(0);
  const kind = KIND_BY_CODE[code] ?? "other";
  const sm = header.readUInt32LE(28);
  const flags = header.readBigUInt64LE(40);
  const variant = flags & FLAG_ARCH_SPECIFIC ? "a" : flags & FLAG_FAMILY_SPECIFIC ? "f" : "";
  const compression = flags & FLAG_ZSTD ? "zstd" : flags & FLAG_LZ4 ? "lz4" : "none";
  const prefix = kind === "other" ? `kind${code}_` : PREFIX_BY_KIND[kind];
  return {
    kind,
    target: `${prefix}${sm}${variant}`,
    sm,
    variant,
    compression,
    payloadBytes,
    uncompressedBytes: compression === "none" ? null : Number(header.readBigUInt64LE(56)),
    section,
  };
}

/**
 * Zero padding between fatbin containers is a few bytes of alignment (nvcc and nvlink align
 * containers to 8 or 16 bytes); walking more than this means a sparse or hostile section (a sparse
 * 20 GiB one took 138 s, issue 28), which is refused instead of read.
 */
const MAX_ZERO_PADDING = 16 * 1024 * 1024;

/** Offset of the next non-zero 8-byte word at or after `from`, or `end` when only zeros remain. */
async function skipZeroPadding(reader: ByteSource, from: number, end: number): Promise<number> {
  if (reader.firstNonZeroWord) return reader.firstNonZeroWord(from, end);
  let at = from;
  while (at + 8 <= end) {
    if (at - from >= MAX_ZERO_PADDING)
      throw new ScanError(
        "corrupt",
        `more than 16 MiB of zero padding in a fatbin section (at offset ${at})`,
      );
    const length = Math.min(PADDING_WINDOW, end - at) & ~7;
    const window = await reader.read(at, length, "fatbin padding");
    for (let i = 0; i < length; i += 8) {
      if (window.readBigUInt64LE(i) !== 0n) return at + i;
    }
    at += length;
  }
  return end;
}

/** Every entry of every container in the section [start, start + size). */
export async function readFatbinSection(
  reader: ByteSource,
  section: string,
  start: number,
  size: number,
): Promise<FatbinEntry[]> {
  const end = start + size;
  const entries: FatbinEntry[] = [];
  let at = start;
  while (at + CONTAINER_HEADER_MIN <= end) {
    const header = await reader.read(at, CONTAINER_HEADER_MIN, `${section} container header`);
    if (header.readUInt32LE(0) !== FATBIN_MAGIC) {
      const next = await skipZeroPadding(reader, at, end);
      if (next === end) break;
      if (next === at) {
        throw new ScanError("corrupt", `${section}: no fatbin magic at offset ${at - start} of the section`);
      }
      at = next;
      continue;
    }
    const { entriesAt, containerEnd } = containerBounds(header, section, at, end);
    await readContainerEntries(reader, section, entriesAt, containerEnd, entries);
    at = containerEnd;
  }
  return entries;
}

/** Where the container at `at` keeps its entries, and where it ends: never past the section's `end`. */
function containerBounds(
  header: Buffer,
  section: string,
  at: number,
  end: number,
): { entriesAt: number; containerEnd: number } {
  const headerSize = header.readUInt16LE(6);
  const entriesSize = Number(header.readBigUInt64LE(8));
  if (headerSize < CONTAINER_HEADER_MIN) {
    throw new ScanError("corrupt", `${section}: fatbin container header size ${headerSize} < 16`);
  }
  const containerEnd = at + headerSize + entriesSize;
  if (!Number.isSafeInteger(containerEnd) || containerEnd > end) {
    throw new ScanError(
      "truncated",
      `${section}: a fatbin container claims ${entriesSize} bytes past the section end`,
    );
  }
  return { entriesAt: at + headerSize, containerEnd };
}

/** The entries of one container [from, containerEnd), added to the section's `entries` (capped). */
async function readContainerEntries(
  reader: ByteSource,
  section: string,
  from: number,
  containerEnd: number,
  entries: FatbinEntry[],
): Promise<void> {
  let entryAt = from;
  while (entryAt < containerEnd) {
    // Redundant for safety (bench/mutation.mjs lists its removal as an equivalent mutant): without
    // it, entryEnd >= entryAt + ENTRY_HEADER_MIN > containerEnd below refuses the same header, as
    // "truncated". It stays for the clearer "corrupt" message before a read past the container.
    if (entryAt + ENTRY_HEADER_MIN > containerEnd) {
      throw new ScanError("corrupt", `${section}: a fatbin entry header is cut off by its container's end`);
    }
    const entryHeader = await reader.read(entryAt, ENTRY_HEADER_MIN, `${section} fatbin entry header`);
    const entryHeaderSize = entryHeader.readUInt32LE(4);
    const payloadBytes = Number(entryHeader.readBigUInt64LE(8));
    if (entryHeaderSize < ENTRY_HEADER_MIN || entryHeaderSize > ENTRY_HEADER_MAX) {
      throw new ScanError(
        "corrupt",
        `${section}: fatbin entry header size ${entryHeaderSize} is not plausible`,
      );
    }
    const entryEnd = entryAt + entryHeaderSize + payloadBytes;
    if (!Number.isSafeInteger(entryEnd) || entryEnd > containerEnd) {
      throw new ScanError(
        "truncated",
        `${section}: a fatbin entry claims ${payloadBytes} bytes past its container`,
      );
    }
    entries.push(describeEntry(entryHeader, payloadBytes, section));
    if (entries.length > MAX_ENTRIES_PER_SECTION) {
      throw new ScanError("corrupt", `${section}: more than ${MAX_ENTRIES_PER_SECTION} fatbin entries`);
    }
    entryAt = entryEnd;
  }
}
