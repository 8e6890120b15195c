/**
 * Positioned reads from an open file, with every range checked against the file size, so a
 * hostile header (an offset or size past the end) becomes a ScanError instead of a short read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { ScanError } from "./errors.js";

/** Random access to bytes with checked ranges: a file (FileReader) or memory (BufferSource, for fuzzing). */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number, what: string): Promise<Buffer>;
  /**
   * Where zero padding ends: the offset of the first 8-byte word at `from + 8k` (with
   * `from + 8k + 8 <= end`) that is not zero, else `end`. Optional: a source that streams its bytes
   * (src/fatbin/stream-scan.ts) answers it without holding the padding; the others leave it to
   * fatbin.ts, which reads the padding in windows.
   */
  firstNonZeroWord?(from: number, end: number): Promise<number>;
}

export function checkRange(size: number, offset: number, length: number, what: string): void {
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

/**
 * A file read with positioned synchronous reads: a scan is thousands of tiny header reads (about
 * 2,800 for libtorch_cuda.so), where one pread costs microseconds and a trip through libuv's thread
 * pool costs far more. The interface stays async so sources can be swapped.
 */
export class FileReader implements ByteSource {
  private constructor(
    private readonly fd: number,
    readonly size: number,
    /** Date.now() after which every read fails with "time-limit" (scan-paths.ts's scan deadline). */
    private readonly deadline: number,
  ) {}

  static async open(path: string, deadline = Infinity): Promise<FileReader> {
    // O_NONBLOCK: a FIFO put where a .so was expected must not block the open.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile()) throw new ScanError("unreadable", "not a regular file");
      return new FileReader(fd, stats.size, deadline);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Exactly `length` bytes at `offset`, or a `truncated` ScanError naming what was being read. */
  async read(offset: number, length: number, what: string): Promise<Buffer> {
    checkRange(this.size, offset, length, what);
    if (Date.now() >= this.deadline)
      throw new ScanError("time-limit", `the scan's time ran out while reading ${what}`);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const bytesRead = readSync(this.fd, buffer, done, length - done, offset + done);
      if (bytesRead === 0) throw new ScanError("truncated", `${what}: the file shrank while being read`);
      done += bytesRead;
    }
    return buffer;
  }

  async close(): Promise<void> {
    closeSync(this.fd);
  }
}
