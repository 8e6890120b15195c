/**
 * A file read at random (a zip's directory, a member's local header) and in ranges as streams (a
 * member's compressed bytes): on disk, or over HTTP where the server has Range requests. A
 * server without them is read once, front to back (src/remote/zip-stream.ts).
 */
import { createReadStream } from "node:fs";
import { FileReader, type ByteSource } from "../fatbin/file-reader.js";
import { ScanError } from "../fatbin/errors.js";
import { FetchError, showUrl, statusError, type HttpClient, type HttpResponse } from "./http.js";

export interface RemoteFile extends ByteSource {
  /** Where it is: a path or a URL, for messages. */
  readonly location: string;
  /** The bytes [offset, offset + length) as a stream; once per call. */
  stream(offset: number, length: number): AsyncIterable<Buffer>;
  /** Body bytes fetched so far for this file (0 on disk). */
  bytesFetched(): number;
  close(): Promise<void>;
}

export class LocalFile implements RemoteFile {
  private constructor(
    private readonly reader: FileReader,
    readonly location: string,
  ) {}

  static async open(path: string): Promise<LocalFile> {
    return new LocalFile(await FileReader.open(path), path);
  }

  get size(): number {
    return this.reader.size;
  }

  read(offset: number, length: number, what: string): Promise<Buffer> {
    return this.reader.read(offset, length, what);
  }

  async *stream(offset: number, length: number): AsyncIterable<Buffer> {
    if (length === 0) return;
    let seen = 0;
    const stream = createReadStream(this.location, {
      start: offset,
      end: offset + length - 1,
      highWaterMark: 1 << 20,
    });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        seen += chunk.length;
        yield chunk;
      }
    } finally {
      stream.destroy();
    }
    if (seen !== length) throw new ScanError("truncated", `${this.location} shrank while being read`);
  }

  bytesFetched(): number {
    return 0;
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}

/** The bytes a Range response carries: "bytes 0-99/1234" -> [0, 99, 1234]. */
function contentRange(header: string | undefined): [number, number, number] | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header?.trim() ?? "");
  if (!match) return null;
  const parts = [Number(match[1]), Number(match[2]), Number(match[3])] as [number, number, number];
  return parts.every(Number.isSafeInteger) && parts[0] <= parts[1] && parts[1] < parts[2] ? parts : null;
}

/** The end of a zip (the end-of-central-directory record and the longest comment) in one request. */
const TAIL_BYTES = 65_557 + 20;

/** What opening a URL gives: random access when the server has Range requests, else the whole body. */
type OpenedUrl =
  { kind: "ranges"; file: HttpRangeFile } | { kind: "stream"; response: HttpResponse; size: number | null };

export class HttpRangeFile implements RemoteFile {
  private fetched = 0;

  private constructor(
    private readonly client: HttpClient,
    readonly location: string,
    readonly size: number,
    /** The file's last bytes, from the request that found its size. */
    private readonly tail: { offset: number; bytes: Buffer },
  ) {}

  /**
   * One request for the file's tail (`Range: bytes=-N`): a 206 gives the size and the zip's end
   * record; a 200 means the server ignores ranges, and its body is the whole file, read on.
   */
  static async open(client: HttpClient, url: string): Promise<OpenedUrl> {
    const response = await client.open(url, { headers: { range: `bytes=-${TAIL_BYTES}` } });
    if (response.status === 200) {
      const length = Number(response.headers["content-length"]);
      return { kind: "stream", response, size: Number.isSafeInteger(length) ? length : null };
    }
    if (response.status !== 206) {
      response.close();
      throw statusError(url, response.status, "the file");
    }
    const range = contentRange(response.headers["content-range"]);
    if (!range) {
      response.close();
      throw new FetchError(`${showUrl(url)}: a 206 answer without a usable Content-Range`, null);
    }
    const parts: Buffer[] = [];
    for await (const chunk of response.body) parts.push(chunk);
    const bytes = Buffer.concat(parts);
    if (bytes.length !== range[1] - range[0] + 1)
      throw new FetchError(
        `${showUrl(url)}: the range answer is ${bytes.length} bytes, not what it claims`,
        null,
      );
    const file = new HttpRangeFile(client, response.url, range[2], { offset: range[0], bytes });
    file.fetched = bytes.length;
    return { kind: "ranges", file };
  }

  async read(offset: number, length: number, what: string): Promise<Buffer> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0)
      throw new ScanError("corrupt", `${what}: impossible range (offset ${offset}, length ${length})`);
    if (offset + length > this.size)
      throw new ScanError(
        "truncated",
        `${what} at offset ${offset} (+${length} bytes) lies past the end of the file (${this.size} bytes)`,
      );
    const { offset: tailAt, bytes } = this.tail;
    if (offset >= tailAt && offset + length <= tailAt + bytes.length)
      return bytes.subarray(offset - tailAt, offset - tailAt + length);
    const parts: Buffer[] = [];
    for await (const chunk of this.stream(offset, length)) parts.push(chunk);
    return Buffer.concat(parts);
  }

  async *stream(offset: number, length: number): AsyncIterable<Buffer> {
    if (length === 0) return;
    // A small file came whole with the first request (its tail): nothing more to fetch.
    const { offset: tailAt, bytes } = this.tail;
    if (offset >= tailAt && offset + length <= tailAt + bytes.length) {
      yield bytes.subarray(offset - tailAt, offset - tailAt + length);
      return;
    }
    const last = offset + length - 1;
    const response = await this.client.open(this.location, {
      headers: { range: `bytes=${offset}-${last}` },
      maxBytes: length,
    });
    const range = contentRange(response.headers["content-range"]);
    if (
      response.status !== 206 ||
      !range ||
      range[0] !== offset ||
      range[1] !== last ||
      range[2] !== this.size
    ) {
      response.close();
      throw new FetchError(
        `${showUrl(this.location)}: the server stopped answering ranges as before (HTTP ${response.status}, ${response.headers["content-range"] ?? "no Content-Range"})`,
        "the file may have changed on the server; try again",
      );
    }
    let seen = 0;
    try {
      for await (const chunk of response.body) {
        seen += chunk.length;
        this.fetched += chunk.length;
        yield chunk;
      }
    } finally {
      response.close();
    }
    if (seen !== length) throw new FetchError(`${showUrl(this.location)}: a range answer ended early`, null);
  }

  bytesFetched(): number {
    return this.fetched;
  }

  async close(): Promise<void> {}
}
