/**
 * The zip format as wheels use it (APPNOTE 6.3.10, https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT):
 * the central directory found from the end-of-central-directory record (ZIP64 where the counts or
 * offsets need it), each member's local header, and a member's bytes inflated as a stream.
 * Installers read the central directory (pip, through Python's zipfile), so it is what says which
 * members a wheel has; a local header that disagrees with it is refused.
 *
 * Bounds (issue 28 item 4): at most 1,000,000 members and 64 MiB of directory; a member's declared
 * size at most 16 GiB, and never more than 1,100 times its compressed size (deflate cannot do more
 * than about 1,032:1, so a larger claim is a lie: a zip bomb); the bytes inflated must be exactly
 * the declared size, with the declared CRC-32.
 */
import { createInflateRaw, crc32 as zlibCrc32 } from "node:zlib";
import { Readable } from "node:stream";
import { ScanError } from "../fatbin/errors.js";
import type { ByteSource } from "../fatbin/file-reader.js";

const EOCD_SIGNATURE = 0x06054b50;
const EOCD64_LOCATOR_SIGNATURE = 0x07064b50;
const EOCD64_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
export const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 65_535;
const MAX_MEMBERS = 1_000_000;
const MAX_DIRECTORY = 64 * 1024 * 1024;
const MAX_MEMBER_SIZE = 16 * 1024 ** 3;
/** Deflate's best ratio is about 1,032:1; the 1 MiB allowance covers tiny members. */
const MAX_RATIO = 1100;
const RATIO_ALLOWANCE = 1024 * 1024;
const STORED = 0;
const DEFLATED = 8;

export interface ZipMember {
  name: string;
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Where the member's local header starts. */
  localHeader: number;
}

interface ZipDirectory {
  members: ZipMember[];
  /** Where the central directory starts: every member's bytes lie before it. */
  directoryOffset: number;
}

function corrupt(message: string): ScanError {
  return new ScanError("corrupt", message);
}

/** The end-of-central-directory record: searched backwards over the longest possible comment. */
async function findEnd(source: ByteSource): Promise<{ at: number; record: Buffer }> {
  if (source.size < EOCD_SIZE) throw new ScanError("not-elf", "not a zip file (too short)");
  const span = Math.min(source.size, EOCD_SIZE + MAX_COMMENT);
  const tail = await source.read(source.size - span, span, "zip end record");
  for (let at = tail.length - EOCD_SIZE; at >= 0; at--) {
    if (tail.readUInt32LE(at) !== EOCD_SIGNATURE) continue;
    // The comment must run exactly to the end of the file: a signature inside a comment is skipped.
    if (at + EOCD_SIZE + tail.readUInt16LE(at + 20) !== tail.length) continue;
    return { at: source.size - span + at, record: tail.subarray(at, at + EOCD_SIZE) };
  }
  throw new ScanError("not-elf", "not a zip file (no end-of-central-directory record)");
}

/** Where the directory is and how many members it has, from the (ZIP64) end records. */
async function directoryBounds(source: ByteSource): Promise<{ offset: number; size: number; count: number }> {
  const { at, record } = await findEnd(source);
  let count = record.readUInt16LE(10);
  let size = record.readUInt32LE(12);
  let offset = record.readUInt32LE(16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    if (at < 20) throw corrupt("zip64 end record locator missing");
    const locator = await source.read(at - 20, 20, "zip64 locator");
    if (locator.readUInt32LE(0) !== EOCD64_LOCATOR_SIGNATURE)
      throw corrupt("zip64 end record locator missing");
    const recordAt = Number(locator.readBigUInt64LE(8));
    if (!Number.isSafeInteger(recordAt) || recordAt + 56 > at) throw corrupt("zip64 end record out of range");
    const zip64 = await source.read(recordAt, 56, "zip64 end record");
    if (zip64.readUInt32LE(0) !== EOCD64_SIGNATURE) throw corrupt("zip64 end record signature");
    count = Number(zip64.readBigUInt64LE(32));
    size = Number(zip64.readBigUInt64LE(40));
    offset = Number(zip64.readBigUInt64LE(48));
  }
  if (!Number.isSafeInteger(count) || count > MAX_MEMBERS) throw corrupt(`zip claims ${count} members`);
  if (!Number.isSafeInteger(size) || size > MAX_DIRECTORY) throw corrupt(`zip directory of ${size} bytes`);
  if (!Number.isSafeInteger(offset) || offset + size > at)
    throw corrupt("zip directory lies past its end record");
  return { offset, size, count };
}

/** Values the ZIP64 extra field (id 1) holds for the 32-bit fields that are all ones. */
function applyZip64(extra: Buffer, member: ZipMember, diskIs64: boolean): void {
  const needs = [
    member.size === 0xffffffff,
    member.compressedSize === 0xffffffff,
    member.localHeader === 0xffffffff,
    diskIs64,
  ];
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (at + 4 + length > extra.length) throw corrupt(`zip extra field of ${member.name} runs past its end`);
    if (id === 1) {
      let field = at + 4;
      const next = (): number => {
        if (field + 8 > at + 4 + length) throw corrupt(`zip64 extra field of ${member.name} is short`);
        const value = Number(extra.readBigUInt64LE(field));
        field += 8;
        return value;
      };
      if (needs[0]) member.size = next();
      if (needs[1]) member.compressedSize = next();
      if (needs[2]) member.localHeader = next();
      return;
    }
    at += 4 + length;
  }
  if (needs[0] || needs[1] || needs[2])
    throw corrupt(`${member.name}: 32-bit fields at their maximum without a zip64 extra field`);
}

function checkMember(member: ZipMember, directoryOffset: number): void {
  const { name } = member;
  for (const value of [member.size, member.compressedSize, member.localHeader])
    if (!Number.isSafeInteger(value) || value < 0) throw corrupt(`${name}: impossible size or offset`);
  if (member.localHeader + 30 + member.compressedSize > directoryOffset)
    throw corrupt(`${name}: its bytes would overlap the central directory`);
  if (member.size > MAX_MEMBER_SIZE)
    throw corrupt(`${name}: ${member.size} bytes uncompressed is more than is read`);
  if (member.method === STORED && member.size !== member.compressedSize)
    throw corrupt(`${name}: stored, yet its sizes differ`);
  if (member.method === DEFLATED && member.size > member.compressedSize * MAX_RATIO + RATIO_ALLOWANCE)
    throw corrupt(
      `${name}: claims ${member.size} bytes from ${member.compressedSize} compressed (a zip bomb)`,
    );
}

/** Every member the central directory lists, checked against the file's bounds. */
export async function readZipDirectory(source: ByteSource): Promise<ZipDirectory> {
  const bounds = await directoryBounds(source);
  const table = await source.read(bounds.offset, bounds.size, "zip central directory");
  const members: ZipMember[] = [];
  let at = 0;
  for (let index = 0; index < bounds.count; index++) {
    if (at + 46 > table.length || table.readUInt32LE(at) !== CENTRAL_SIGNATURE)
      throw corrupt(`zip central directory entry ${index} is cut off or has no signature`);
    const nameLength = table.readUInt16LE(at + 28);
    const extraLength = table.readUInt16LE(at + 30);
    const commentLength = table.readUInt16LE(at + 32);
    const end = at + 46 + nameLength + extraLength + commentLength;
    if (end > table.length) throw corrupt(`zip central directory entry ${index} runs past the directory`);
    const member: ZipMember = {
      name: table.toString("utf8", at + 46, at + 46 + nameLength),
      flags: table.readUInt16LE(at + 8),
      method: table.readUInt16LE(at + 10),
      crc32: table.readUInt32LE(at + 16),
      compressedSize: table.readUInt32LE(at + 20),
      size: table.readUInt32LE(at + 24),
      localHeader: table.readUInt32LE(at + 42),
    };
    applyZip64(
      table.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength),
      member,
      table.readUInt16LE(at + 34) === 0xffff,
    );
    checkMember(member, bounds.offset);
    members.push(member);
    at = end;
  }
  return { members, directoryOffset: bounds.offset };
}

/** Where a member's compressed bytes start, from its local header, which must name it as the directory does. */
export async function memberDataOffset(source: ByteSource, member: ZipMember): Promise<number> {
  const head = await source.read(member.localHeader, 30, `local header of ${member.name}`);
  if (head.readUInt32LE(0) !== LOCAL_SIGNATURE)
    throw corrupt(`${member.name}: no local header where the directory says`);
  const nameLength = head.readUInt16LE(26);
  const extraLength = head.readUInt16LE(28);
  const name = await source.read(member.localHeader + 30, nameLength, `local name of ${member.name}`);
  if (name.toString("utf8") !== member.name)
    throw corrupt(`${member.name}: its local header names another file`);
  const start = member.localHeader + 30 + nameLength + extraLength;
  if (start + member.compressedSize > source.size)
    throw corrupt(`${member.name}: its bytes run past the end`);
  return start;
}

/** Node 20.15+ has zlib.crc32; where it does not, the check is skipped. */
const crc32: ((data: Buffer, value?: number) => number) | null =
  typeof zlibCrc32 === "function" ? zlibCrc32 : null;

/**
 * A member's bytes, inflated as they arrive, checked against the declared size and CRC-32; a
 * consumer that stops early stops the reading.
 */
export async function* memberBytes(
  member: ZipMember,
  compressed: AsyncIterable<Buffer>,
): AsyncGenerator<Buffer> {
  if (member.method !== STORED && member.method !== DEFLATED)
    throw new ScanError("unsupported", `${member.name}: zip compression method ${member.method} is not read`);
  const input = Readable.from(compressed, { objectMode: false });
  const output = member.method === DEFLATED ? input.pipe(createInflateRaw({ chunkSize: 256 * 1024 })) : input;
  // pipe() does not forward the source's errors: end the inflater with them.
  if (output !== input) input.on("error", (error) => output.destroy(error));
  let seen = 0;
  let crc = 0;
  try {
    for await (const chunk of output as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > member.size)
        throw corrupt(`${member.name}: inflates past its declared ${member.size} bytes`);
      if (crc32) crc = crc32(chunk, crc);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ScanError || (error as { name?: string })?.name === "FetchError") throw error;
    throw corrupt(`${member.name}: does not inflate (${(error as Error).message})`);
  } finally {
    input.destroy();
    output.destroy();
  }
  if (seen !== member.size)
    throw new ScanError("truncated", `${member.name}: inflated to ${seen} of its ${member.size} bytes`);
  // A member read without its directory whose CRC sits in a data descriptor (flag 8) is not checked.
  if (crc32 && !(member.flags & 8 && member.crc32 === 0) && crc >>> 0 !== member.crc32 >>> 0)
    throw corrupt(`${member.name}: CRC-32 does not match`);
}
