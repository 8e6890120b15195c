/** One file (.so, .o, or an .a archive of objects) to its fatbin entries, or a typed error. */
import { BufferSource, FileReader, type ByteSource } from "./file-reader.js";
import { isElfMagic, readElfFile } from "./elf.js";
import { readFatbinSection, type FatbinEntry } from "./fatbin.js";
import { AR_MAGIC, readArchiveMembers } from "./archive.js";
import { ScanError, type ScanErrorCode } from "./errors.js";
import { errorMessage } from "../errors.js";

/**
 * Sections that hold fatbin containers: .nv_fatbin is what the CUDA runtime registers and loads;
 * __nv_relfatbin holds relocatable (-rdc) device code for a later device link. In an object file
 * that relocatable code is its device code; a shared library may also carry it for programs that
 * link against it (NCCL's and NVSHMEM's device libraries do), but never loads it itself, and
 * cuobjdump does not list it there (bench/device/scan-compare.sh on the H100 environment).
 */
export function fatbinSections(kind: string): Set<string> {
  return kind === "relocatable" ? new Set([".nv_fatbin", "__nv_relfatbin"]) : new Set([".nv_fatbin"]);
}

interface ScannedEntry extends FatbinEntry {
  /** The archive member it came from; null for a plain ELF file. */
  member: string | null;
}

export interface FileScan {
  path: string;
  sizeBytes: number;
  entries: ScannedEntry[];
  error: { code: ScanErrorCode; message: string } | null;
}

async function entriesOfElf(reader: ByteSource, base: number, limit: number, member: string | null) {
  const entries: ScannedEntry[] = [];
  const elf = await readElfFile(reader, base, limit);
  const wanted = fatbinSections(elf.kind);
  for (const section of elf.sections) {
    if (!wanted.has(section.name) || !section.hasBits || section.size === 0) continue;
    if (section.offset - base + section.size > limit) {
      throw new ScanError("truncated", `section ${section.name} lies past the end of the file`);
    }
    for (const entry of await readFatbinSection(reader, section.name, section.offset, section.size)) {
      entries.push({ ...entry, member });
    }
  }
  return entries;
}

/** `deadline`: Date.now() after which reading stops with a "time-limit" error (scan-paths.ts). */
export async function scanFile(path: string, deadline = Infinity): Promise<FileScan> {
  let reader: FileReader;
  try {
    reader = await FileReader.open(path, deadline);
  } catch (error) {
    return { path, sizeBytes: 0, entries: [], error: { code: "unreadable", message: errorMessage(error) } };
  }
  try {
    return await scanSource(reader, path);
  } finally {
    await reader.close();
  }
}

/** The same reading over bytes in memory (the fuzzer's entry point). */
export function scanBuffer(bytes: Buffer, name = "(buffer)"): Promise<FileScan> {
  return scanSource(new BufferSource(bytes), name);
}

async function scanSource(reader: ByteSource, path: string): Promise<FileScan> {
  try {
    const entries = await entriesOfSource(reader);
    return { path, sizeBytes: reader.size, entries, error: null };
  } catch (error) {
    return { path, sizeBytes: reader.size, entries: [], error: scanErrorOf(error) };
  }
}

/** Every fatbin entry of an ELF file or ar archive behind `reader`; throws what it cannot read. */
export async function entriesOfSource(reader: ByteSource): Promise<ScannedEntry[]> {
  const head = await reader.read(0, Math.min(8, reader.size), "file header");
  if (head.toString("latin1") === AR_MAGIC) {
    const entries: ScannedEntry[] = [];
    for (const member of await readArchiveMembers(reader)) {
      const memberHead = await reader.read(member.offset, Math.min(4, member.size), "archive member");
      if (!isElfMagic(memberHead)) continue; // symbol tables, text members
      entries.push(...(await entriesOfElf(reader, member.offset, member.size, member.name)));
    }
    return entries;
  }
  if (isElfMagic(head)) return entriesOfElf(reader, 0, reader.size, null);
  throw new ScanError("not-elf", "not an ELF file or ar archive");
}

/** A thrown error as a file's scan error: a ScanError as is, an OS error "unreadable", else "internal". */
export function scanErrorOf(error: unknown): { code: ScanErrorCode; message: string } {
  const scanError =
    error instanceof ScanError
      ? error
      : // An operating-system error (EIO, EACCES ...) is the file's; anything else is ours.
        new ScanError(isSystemError(error) ? "unreadable" : "internal", errorMessage(error));
  return { code: scanError.code, message: scanError.message };
}

function isSystemError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/** Distinct targets of one kind, in a stable order (by SM number, plain before a before f). */
export function distinctTargets(entries: FatbinEntry[], kind: FatbinEntry["kind"]): string[] {
  const order = (e: FatbinEntry) => e.sm * 10 + (e.variant === "a" ? 1 : e.variant === "f" ? 2 : 0);
  const seen = new Map<string, number>();
  for (const entry of entries) if (entry.kind === kind) seen.set(entry.target, order(entry));
  return [...seen.entries()].sort((a, b) => a[1] - b[1]).map(([target]) => target);
}
