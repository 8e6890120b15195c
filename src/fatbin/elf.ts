/**
 * The few parts of an ELF64 little-endian file the scanner needs: its section headers and their
 * names. Reads the ELF header, the section header table and the section-name string table, and
 * nothing else. (System V gABI, "ELF Header" and "Sections": https://refspecs.linuxfoundation.org/elf/gabi4+/ch4.eheader.html)
 */
import type { ByteSource } from "./file-reader.js";
import { ScanError } from "./errors.js";

interface ElfSection {
  name: string;
  /** Absolute offset of the section's bytes in the file. */
  offset: number;
  size: number;
  /** SHT_NOBITS sections (.bss) occupy no bytes in the file. */
  hasBits: boolean;
}

const ELF_MAGIC = 0x464c457f; // "\x7fELF" read little-endian
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const SHT_NOBITS = 8;
const SECTION_HEADER_SIZE = 64;
/**
 * Far above any real file (libtorch_cuda.so has ~40); stops absurd counts from hostile headers.
 * With 64-byte entries the table read is at most 4 MiB, and never past the file's end.
 */
const MAX_SECTIONS = 65_536;
const MAX_NAME_TABLE = 16 << 20;

/** True when the 4 bytes look like an ELF file (cheap pre-check before a full parse). */
export function isElfMagic(head: Buffer): boolean {
  return head.length >= 4 && head.readUInt32LE(0) === ELF_MAGIC;
}

interface ElfFile {
  /** e_type: relocatable objects (.o) keep device code for linking, shared libraries load theirs. */
  kind: "relocatable" | "executable" | "shared" | "other";
  sections: ElfSection[];
}

const KIND_BY_TYPE: Record<number, ElfFile["kind"]> = { 1: "relocatable", 2: "executable", 3: "shared" };

/** The sections of the ELF file starting at `base` (0 for a file, the member offset in an archive). */
export async function readElfFile(reader: ByteSource, base: number, limit: number): Promise<ElfFile> {
  const header = await reader.read(base, 64, "ELF header");
  if (!isElfMagic(header)) throw new ScanError("not-elf", "not an ELF file");
  if (header[4] !== ELFCLASS64 || header[5] !== ELFDATA2LSB) {
    throw new ScanError("unsupported", "only 64-bit little-endian ELF is read (x86_64, aarch64)");
  }
  const sectionTable = Number(header.readBigUInt64LE(0x28));
  const entrySize = header.readUInt16LE(0x3a);
  let count = header.readUInt16LE(0x3c);
  let nameIndex = header.readUInt16LE(0x3e);
  const kind = KIND_BY_TYPE[header.readUInt16LE(0x10)] ?? "other";
  if (sectionTable === 0) return { kind, sections: [] };
  // ELF64 section headers are exactly 64 bytes. Trusting a larger e_shentsize let one 64-byte
  // header on a sparse file ask for a 4 GB table (65,535 x 65,535 bytes; issue 12).
  if (entrySize !== SECTION_HEADER_SIZE)
    throw new ScanError("unsupported", `section header size ${entrySize}, not the ELF64 size 64`);
  // ELF extended numbering: counts past 0xff00 live in section 0.
  if (count === 0 || nameIndex === 0xffff) {
    const first = await reader.read(base + sectionTable, SECTION_HEADER_SIZE, "section header 0");
    if (count === 0) count = Number(first.readBigUInt64LE(0x20));
    if (nameIndex === 0xffff) nameIndex = first.readUInt32LE(0x28);
  }
  if (count > MAX_SECTIONS) throw new ScanError("corrupt", `absurd section count ${count}`);
  if (!Number.isSafeInteger(sectionTable) || sectionTable + count * entrySize > limit) {
    throw new ScanError("truncated", "the section header table lies past the end of the file");
  }
  const table = await reader.read(base + sectionTable, count * entrySize, "section header table");
  const raw = [];
  for (let i = 0; i < count; i++) {
    const at = i * entrySize;
    raw.push({
      nameOffset: table.readUInt32LE(at),
      type: table.readUInt32LE(at + 4),
      offset: Number(table.readBigUInt64LE(at + 0x18)),
      size: Number(table.readBigUInt64LE(at + 0x20)),
    });
  }
  const names = raw[nameIndex];
  if (!names) throw new ScanError("corrupt", `section name table index ${nameIndex} out of range`);
  if (names.size > MAX_NAME_TABLE || names.offset + names.size > limit) {
    throw new ScanError("truncated", "the section name table lies past the end of the file");
  }
  const nameTable = await reader.read(base + names.offset, names.size, "section name table");
  const sections = raw.map((section) => {
    const end = nameTable.indexOf(0, section.nameOffset);
    return {
      name:
        section.nameOffset < nameTable.length
          ? nameTable.toString("latin1", section.nameOffset, end < 0 ? undefined : end)
          : "",
      offset: base + section.offset,
      size: section.size,
      hasBits: section.type !== SHT_NOBITS,
    };
  });
  return { kind, sections };
}
