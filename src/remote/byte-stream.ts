/**
 * Reading a stream of chunks front to back in records of known sizes: the tar reader's headers
 * and bodies, a zip read without Range requests. A body handed out with take() that its consumer
 * leaves unfinished is skipped before the next read.
 */
import { ScanError } from "../fatbin/errors.js";

export class ByteStream {
  private readonly iterator: AsyncIterator<Buffer>;
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;
  /** Bytes of the stream consumed so far (read, taken or skipped). */
  position = 0;
  /** Bytes a take() left unread, skipped before anything else is read. */
  private owed = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** Holds at least `count` bytes unless the stream ends first; false then. */
  private async fill(count: number): Promise<boolean> {
    while (this.buffer.length < count && !this.ended) {
      const step = await this.iterator.next();
      if (step.done) this.ended = true;
      else this.buffer = this.buffer.length === 0 ? step.value : Buffer.concat([this.buffer, step.value]);
    }
    return this.buffer.length >= count;
  }

  private async settle(): Promise<void> {
    if (this.owed > 0) {
      const owed = this.owed;
      this.owed = 0;
      await this.skip(owed);
    }
  }

  /** True when no byte is left. */
  async atEnd(): Promise<boolean> {
    await this.settle();
    return !(await this.fill(1));
  }

  /** The next `count` bytes without consuming them (fewer at the end of the stream). */
  async peek(count: number): Promise<Buffer> {
    await this.settle();
    await this.fill(count);
    return this.buffer.subarray(0, count);
  }

  /** Exactly `count` bytes, or a truncated error naming `what`. */
  async read(count: number, what: string): Promise<Buffer> {
    await this.settle();
    if (!(await this.fill(count))) throw new ScanError("truncated", `${what}: the stream ends early`);
    const out = this.buffer.subarray(0, count);
    this.buffer = this.buffer.subarray(count);
    this.position += count;
    return out;
  }

  async skip(count: number): Promise<void> {
    let left = count;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill(1)))
        throw new ScanError("truncated", "the stream ends inside a record");
      const used = Math.min(left, this.buffer.length);
      this.buffer = this.buffer.subarray(used);
      this.position += used;
      left -= used;
    }
  }

  /**
   * The next `count` bytes as chunks; what the consumer leaves unread (or never starts to read) is
   * skipped before the next read.
   */
  take(count: number): AsyncIterable<Buffer> {
    this.owed += count;
    return this.drain(count);
  }

  private async *drain(count: number): AsyncGenerator<Buffer> {
    const startedOwing = this.owed;
    if (startedOwing < count) return; // already skipped by a later read
    let left = count;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill(1)))
        throw new ScanError("truncated", "the stream ends inside a record");
      const used = Math.min(left, this.buffer.length);
      const out = this.buffer.subarray(0, used);
      this.buffer = this.buffer.subarray(used);
      this.position += used;
      left -= used;
      this.owed -= used;
      yield out;
    }
  }

  /** Everything left, refused past `max` bytes. */
  async rest(max: number, what: string): Promise<Buffer> {
    await this.settle();
    while (!this.ended) {
      if (this.buffer.length > max) break;
      await this.fill(this.buffer.length + 1);
    }
    if (this.buffer.length > max) throw new ScanError("corrupt", `${what}: more than ${max} bytes`);
    const out = this.buffer;
    this.position += out.length;
    this.buffer = Buffer.alloc(0);
    return out;
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
