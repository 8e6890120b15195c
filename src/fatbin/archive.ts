/**
 * Members of a Unix `ar` archive (static libraries, .a): name, offset and size of each, read from
 * the 60-byte member headers only. GNU long names ("/123" into the "//" table) and BSD names
 * ("#1/len") are resolved; the symbol tables ("/", "/SYM64/") are skipped.
 */
import type { ByteSource } from "./file-reader.js";
import { ScanError } from "./errors.js";

export const AR_MAGIC = "!<arch>\n";
const MEMBER_HEADER = 60;
const MAX_MEMBERS = 1_000_000;
/**
 * The GNU "//" table holds every member name longer than 15 characters, each ending in "/\n": a
 * static library of 100,000 members with 100-character names needs 10 MB. A header claiming more
 * (one of 1.9 GB in a sparse file was allocated whole, issue 28) is refused before reading.
 */
const MAX_LONG_NAME_TABLE = 16 * 1024 * 1024;

interface ArchiveMember {
  name: string;
  offset: number;
  size: number;
}

export async function readArchiveMembers(reader: ByteSource): Promise<ArchiveMember[]> {
  const members: ArchiveMember[] = [];
  let longNames: Buffer | null = null;
  let at = AR_MAGIC.length;
  while (at + MEMBER_HEADER <= reader.size) {
    const header = await reader.read(at, MEMBER_HEADER, "archive member header");
    if (header.toString("latin1", 58, 60) !== "`\n") {
      throw new ScanError("corrupt", `archive member header at offset ${at} has no terminator`);
    }
    const rawName = header.toString("latin1", 0, 16).trimEnd();
    const size = Number.parseInt(header.toString("latin1", 48, 58).trim(), 10);
    if (!Number.isSafeInteger(size) || size < 0)
      throw new ScanError("corrupt", `archive member size at offset ${at}`);
    let offset = at + MEMBER_HEADER;
    let memberSize = size;
    let name = rawName;
    if (offset + size > reader.size)
      throw new ScanError("truncated", `archive member "${rawName}" runs past the end`);
    if (rawName === "//") {
      if (size > MAX_LONG_NAME_TABLE)
        throw new ScanError("unsupported", `archive long-name table of ${size} bytes (more than 16 MiB)`);
      longNames = await reader.read(offset, size, "archive long-name table");
    } else if (rawName.startsWith("#1/")) {
      const nameLength = Number.parseInt(rawName.slice(3), 10);
      if (!Number.isSafeInteger(nameLength) || nameLength < 0 || nameLength > size) {
        throw new ScanError("corrupt", `archive member name length "${rawName}"`);
      }
      name = (await reader.read(offset, nameLength, "archive member name"))
        .toString("latin1")
        .replace(/\0+$/, "");
      offset += nameLength;
      memberSize -= nameLength;
    } else if (/^\/\d+$/.test(rawName) && longNames) {
      const start = Number(rawName.slice(1));
      const stop = longNames.indexOf("/\n", start);
      name = longNames.toString("latin1", start, stop < 0 ? undefined : stop);
    } else {
      name = rawName.replace(/\/$/, "");
    }
    if (rawName !== "/" && rawName !== "//" && rawName !== "/SYM64/" && !rawName.startsWith("__.SYMDEF")) {
      members.push({ name, offset, size: memberSize });
      if (members.length > MAX_MEMBERS) throw new ScanError("corrupt", "absurd number of archive members");
    }
    at += MEMBER_HEADER + size + (size % 2); // members are 2-byte aligned
  }
  return members;
}
