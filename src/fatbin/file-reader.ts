/**
 * Positioned reads from an open file, with every range checked against the file size, so a
 * hostile header (an offset or size past the end) becomes a ScanError instead of a short read.
 */
import { open, type FileHandle } from "node:fs/promises";
import { ScanError } from "./errors.js";

/** Random access to bytes with checked ranges: a file (FileReader) or memory (BufferSource, for fuzzing). */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number, what: string): Promise<Buffer>;
}

function checkRange(size: number, offset: number, length: number, what: string): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new ScanError("corrupt", `${what}: impossible range (offset ${offset}, length ${length})`);
  }
  if (offset + length > size) {
    throw new ScanError(
      "truncated",
      `${what} at offset ${offset} (+${length} bytes) lies past the end of the file (${size} bytes)`,
    );
  }
}

export class BufferSource implements ByteSource {
  constructor(private readonly bytes: Buffer) {}
  get size(): number {
    return this.bytes.length;
  }
  async read(offset: number, length: number, what: string): Promise<Buffer> {
    checkRange(this.bytes.length, offset, length, what);
    return this.bytes.subarray(offset, offset + length);
  }
}

export class FileReader implements ByteSource {
  private constructor(
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  static async open(path: string): Promise<FileReader> {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      return new FileReader(handle, size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Exactly `length` bytes at `offset`, or a `truncated` ScanError naming what was being read. */
  async read(offset: number, length: number, what: string): Promise<Buffer> {
    checkRange(this.size, offset, length, what);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.handle.read(buffer, done, length - done, offset + done);
      if (bytesRead === 0) throw new ScanError("truncated", `${what}: the file shrank while being read`);
      done += bytesRead;
    }
    return buffer;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
