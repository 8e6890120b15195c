/**
 * A zip read front to back (a server without Range requests): member after member from their
 * local headers, then the central directory at the end, which must list exactly the members met,
 * at the offsets met, under the same names and sizes (installers trust the directory; a member the
 * directory does not list, or lists elsewhere, is a zip built to mislead, and the wheel is refused).
 */
import { ScanError } from "../fatbin/errors.js";
import type { ByteSource } from "../fatbin/file-reader.js";
import { ByteStream } from "./byte-stream.js";
import { LOCAL_SIGNATURE, readZipDirectory, type ZipMember } from "./zip.js";

const CENTRAL_SIGNATURE = 0x02014b50;
const DESCRIPTOR_SIGNATURE = 0x08074b50;
const MAX_TAIL = 64 * 1024 * 1024 + 65_557;

export interface StreamedMember extends ZipMember {
  /** The compressed bytes; read them now or never (they are skipped otherwise). */
  compressed: AsyncIterable<Buffer>;
}

function corrupt(message: string): ScanError {
  return new ScanError("corrupt", message);
}

async function readLocalHeader(stream: ByteStream): Promise<ZipMember> {
  const localHeader = stream.position;
  const head = await stream.read(30, "zip local header");
  const flags = head.readUInt16LE(6);
  const nameLength = head.readUInt16LE(26);
  const extraLength = head.readUInt16LE(28);
  const name = (await stream.read(nameLength, "zip member name")).toString("utf8");
  const extra = await stream.read(extraLength, "zip extra field");
  const member: ZipMember = {
    name,
    flags,
    method: head.readUInt16LE(8),
    crc32: head.readUInt32LE(14),
    compressedSize: head.readUInt32LE(18),
    size: head.readUInt32LE(22),
    localHeader,
  };
  if (member.size === 0xffffffff || member.compressedSize === 0xffffffff) {
    // A local ZIP64 extra field holds both sizes, uncompressed first.
    for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
      if (extra.readUInt16LE(at) !== 1 || at + 20 > extra.length) continue;
      member.size = Number(extra.readBigUInt64LE(at + 4));
      member.compressedSize = Number(extra.readBigUInt64LE(at + 12));
    }
  }
  if (flags & 8 && member.compressedSize === 0 && member.size === 0)
    throw new ScanError(
      "unsupported",
      `${name}: its size is only in a trailing data descriptor, which a zip read without Range requests cannot use`,
    );
  if (!Number.isSafeInteger(member.size) || !Number.isSafeInteger(member.compressedSize))
    throw corrupt(`${name}: impossible sizes in its local header`);
  return member;
}

async function skipDescriptor(stream: ByteStream, member: ZipMember): Promise<void> {
  if (!(member.flags & 8)) return;
  const zip64 = member.size >= 0xffffffff || member.compressedSize >= 0xffffffff;
  const head = await stream.peek(4);
  const signed = head.length === 4 && head.readUInt32LE(0) === DESCRIPTOR_SIGNATURE;
  await stream.skip((signed ? 4 : 0) + (zip64 ? 20 : 12));
}

/**
 * A ByteSource over the file's tail (the directory and end records) kept in memory. The end
 * record is searched for over the last 64 KiB, which may reach back before the directory into
 * bytes already passed: those read as zeros, which hold no signature.
 */
function tailSource(tail: Buffer, offset: number): ByteSource {
  return {
    size: offset + tail.length,
    async read(at: number, length: number, what: string) {
      if (at < 0 || at + length > offset + tail.length) throw corrupt(`${what} lies outside the zip`);
      if (at >= offset) return tail.subarray(at - offset, at - offset + length);
      if (at + length <= offset) throw corrupt(`${what} lies before the central directory`);
      return Buffer.concat([Buffer.alloc(offset - at), tail.subarray(0, at + length - offset)]);
    },
  };
}

/**
 * Members in file order; the caller reads each one's `compressed` bytes (or not) before asking for
 * the next. After the last, the directory is read and compared with what was met.
 */
export async function* zipMembersInStream(source: AsyncIterable<Buffer>): AsyncGenerator<StreamedMember> {
  const stream = new ByteStream(source);
  const met: ZipMember[] = [];
  try {
    for (;;) {
      const signature = await stream.peek(4);
      if (signature.length < 4) throw new ScanError("truncated", "the zip ends before its central directory");
      const value = signature.readUInt32LE(0);
      if (value === CENTRAL_SIGNATURE) break;
      if (value !== LOCAL_SIGNATURE) throw corrupt(`no zip local header at offset ${stream.position}`);
      const member = await readLocalHeader(stream);
      met.push(member);
      yield { ...member, compressed: stream.take(member.compressedSize) };
      await stream.peek(0); // skips what the consumer left of the member
      await skipDescriptor(stream, member);
    }
    const directoryAt = stream.position;
    const tail = await stream.rest(MAX_TAIL, "zip central directory");
    const directory = await readZipDirectory(tailSource(tail, directoryAt));
    compareWithDirectory(met, directory.members);
  } finally {
    await stream.close();
  }
}

function compareWithDirectory(met: ZipMember[], listed: ZipMember[]): void {
  const byOffset = new Map(met.map((m) => [m.localHeader, m]));
  if (met.length !== listed.length)
    throw corrupt(`the zip holds ${met.length} members, its central directory lists ${listed.length}`);
  for (const entry of listed) {
    const local = byOffset.get(entry.localHeader);
    if (!local || local.name !== entry.name)
      throw corrupt(`the central directory's ${entry.name} is not the member at offset ${entry.localHeader}`);
    if (
      local.compressedSize !== entry.compressedSize ||
      local.size !== entry.size ||
      local.method !== entry.method
    )
      throw corrupt(`${entry.name}: its local header and the central directory disagree on its sizes`);
  }
}
