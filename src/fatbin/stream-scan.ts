/**
 * The scan of a file that arrives as a stream of bytes (a member inflated out of a wheel, a file
 * in an image layer's tar), with the same result as scanFile on the same bytes, without keeping
 * the file: only the bytes the reader reads are kept.
 *
 * An ELF file names its sections only at its end (the section header table), so the fatbin
 * sections are known after their bytes went by. The first pass therefore reads speculatively:
 * wherever the fatbin magic appears it runs the real fatbin reader (readFatbinSection) from there,
 * fed by the stream, and keeps every byte it reads, plus the ELF header, the section header table
 * and the bytes before it (where the section names live). Then the real scan runs again over
 * only the kept bytes (SparseSource). A speculative run from a section's first container reads a
 * superset of what the run bounded by the section reads (the bound only stops it sooner), so for
 * every file whose fatbin sections start with a container (every nvcc output seen) one pass is
 * enough. Where a read finds no kept byte, another pass over a fresh stream keeps exactly what
 * was missing (the section table by then known); a few passes at most, or a typed error.
 */
import { ScanError } from "./errors.js";
import { checkRange, type ByteSource } from "./file-reader.js";
import { isElfMagic, readElfFile } from "./elf.js";
import { FATBIN_MAGIC, readFatbinSection } from "./fatbin.js";
import { AR_MAGIC } from "./archive.js";
import { entriesOfSource, fatbinSections, scanBuffer, scanErrorOf, type FileScan } from "./scan-file.js";

/** Opens the file's bytes from the start, once per pass. */
type OpenStream = () => AsyncIterable<Buffer>;

export interface StreamedFile {
  /** The name the result carries (a path inside a wheel or an image). */
  path: string;
  /** The size the container declares (zip central directory, tar header): the bytes must match. */
  size: number;
  open: OpenStream;
}

export interface StreamScan extends FileScan {
  /** How many times the bytes were streamed: 1 for every real file seen, more only for odd layouts. */
  passes: number;
}

const MAX_PASSES = 4;
/** The bytes before the section header table kept in pass 1: .shstrtab lies just before it. */
const NAME_TABLE_WINDOW = 256 * 1024;
/** The section header table's largest valid size (65,536 headers of 64 bytes, elf.ts). */
const SECTION_TABLE_MAX = 65_536 * 64;
/** Speculation stops (and a later pass reads exactly) past these. */
const MAX_WALKERS = 65_536;
const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/**
 * The section name table names itself: wherever ".shstrtab\0" goes by, the bytes around it are
 * kept too, since linkers that put the symbol strings after it (lld) leave it far from the table.
 */
const SHSTRTAB = Buffer.from(".shstrtab\0", "latin1");
const NAMES_AROUND = 16 * 1024;
const MAX_NAME_SIGHTINGS = 64;
/** Static archives (.a) are read from memory up to this size; larger ones are not read in a stream. */
const MAX_BUFFERED_ARCHIVE = 64 * 1024 * 1024;
/** Bytes of already streamed data kept for reads that reach back (a padding scan at a header). */
const RETAIN = 64 * 1024;
/** Bytes handed to the walkers at a time. */
const SEGMENT = 64 * 1024;
const MAGIC = Buffer.alloc(4);
MAGIC.writeUInt32LE(FATBIN_MAGIC);

/** A read the kept bytes cannot answer: another pass keeps that range. */
class MissingBytes extends Error {
  constructor(
    readonly offset: number,
    readonly length: number,
  ) {
    super(`bytes ${offset}+${length} were not kept`);
  }
}

/**
 * The stream itself failed (a connection dropped): not the file's fault, so not a scan error of
 * the file; scanStream hands the cause to its caller.
 */
class SourceFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("the stream failed");
  }
}

/** The file's chunks; a failure of the source is told apart from the reader's own errors. */
async function* chunksOf(file: StreamedFile): AsyncGenerator<Buffer> {
  const iterator = file.open()[Symbol.asyncIterator]();
  try {
    for (;;) {
      let step: IteratorResult<Buffer>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw error instanceof ScanError ? error : new SourceFailure(error);
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/** Ends a speculative walk that another walk already took (same container, same future). */
class WalkTaken extends Error {}

/** Kept byte ranges, and zero-padding answers, keyed by where they start. */
class KeptBytes {
  private readonly ranges = new Map<number, Buffer>();
  private sortedStarts: number[] | null = null;
  /** from -> [first non-zero word, the end the scan was bounded by] */
  readonly padding = new Map<number, [number, number]>();
  /** The few large fixed ranges (ELF header, section table, the bytes before it), searched whole. */
  private readonly fixed: { offset: number; data: Buffer }[] = [];
  bytes = 0;

  addFixed(offset: number, data: Buffer): void {
    this.fixed.push({ offset, data });
    this.bytes += data.length;
  }

  add(offset: number, data: Buffer): void {
    const known = this.ranges.get(offset);
    if (known && known.length >= data.length) return;
    this.ranges.set(offset, data);
    this.bytes += data.length - (known?.length ?? 0);
    this.sortedStarts = null;
  }

  /** The bytes [offset, offset + length) from one kept range, or null. */
  find(offset: number, length: number): Buffer | null {
    const exact = this.ranges.get(offset);
    if (exact && exact.length >= length) return exact.subarray(0, length);
    for (const range of this.fixed) {
      if (range.offset <= offset && offset + length <= range.offset + range.data.length)
        return range.data.subarray(offset - range.offset, offset - range.offset + length);
    }
    const starts = (this.sortedStarts ??= [...this.ranges.keys()].sort((a, b) => a - b));
    // The last start <= offset, then back over the few ranges that may still reach over it.
    let low = 0;
    let high = starts.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if ((starts[mid] as number) <= offset) low = mid + 1;
      else high = mid - 1;
    }
    for (let i = high; i >= 0 && i > high - 64; i--) {
      const start = starts[i] as number;
      const data = this.ranges.get(start) as Buffer;
      if (start + data.length >= offset + length)
        return data.subarray(offset - start, offset - start + length);
    }
    return null;
  }
}

/** The scan's bytes as far as they were kept. */
class SparseSource implements ByteSource {
  constructor(
    readonly size: number,
    private readonly kept: KeptBytes,
  ) {}

  async read(offset: number, length: number, what: string): Promise<Buffer> {
    checkRange(this.size, offset, length, what);
    const found = this.kept.find(offset, length);
    if (!found) throw new MissingBytes(offset, length);
    return found;
  }

  async firstNonZeroWord(from: number, end: number): Promise<number> {
    const known = this.kept.padding.get(from);
    if (!known) throw new MissingBytes(from, 8);
    const [found, boundedBy] = known;
    if (found < boundedBy) return found + 8 <= end ? found : end;
    if (end <= boundedBy) return end;
    throw new MissingBytes(boundedBy, 8);
  }
}

interface PendingRead {
  kind: "bytes";
  offset: number;
  length: number;
  resolve: (data: Buffer) => void;
  reject: (error: unknown) => void;
}
interface PendingScan {
  kind: "padding";
  from: number;
  end: number;
  /** How far the scan has looked (an offset from + 8k). */
  at: number;
  resolve: (at: number) => void;
  reject: (error: unknown) => void;
}

/** One run of the fatbin reader fed by the stream: each read waits for its bytes to go by. */
class Walker implements ByteSource {
  pending: PendingRead | PendingScan | null = null;
  finished = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly pass: Pass,
    readonly size: number,
  ) {}

  /** Resolves once the walk asks for something again, or has ended. */
  settled(): Promise<void> {
    if (this.pending || this.finished) return Promise.resolve();
    return new Promise((resolve) => (this.wake = resolve));
  }

  private ask(request: PendingRead | PendingScan): void {
    this.pending = request;
    this.wake?.();
    this.wake = null;
  }

  finish(): void {
    this.finished = true;
    this.wake?.();
    this.wake = null;
  }

  read(offset: number, length: number, what: string): Promise<Buffer> {
    checkRange(this.size, offset, length, what);
    if (what.endsWith("container header") && !this.pass.claimContainer(offset)) {
      return Promise.reject(new WalkTaken());
    }
    return new Promise((resolve, reject) => this.ask({ kind: "bytes", offset, length, resolve, reject }));
  }

  firstNonZeroWord(from: number, end: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.ask({ kind: "padding", from, end, at: from, resolve, reject }),
    );
  }
}

/** One streaming of the file: the walkers it feeds and the fixed ranges it keeps. */
class Pass {
  private readonly walkers: Walker[] = [];
  private readonly claimed = new Set<number>();
  private segments: { start: number; data: Buffer }[] = [];
  private windowEnd = 0;
  private magicTail = Buffer.alloc(0);
  private namesTail = Buffer.alloc(0);
  private nameSightings = 0;
  private started = 0;
  private wanted: { offset: number; data: Buffer; filled: number }[] = [];

  constructor(
    private readonly size: number,
    readonly kept: KeptBytes,
    /** Start walkers wherever the magic appears (pass 1); else only the exact ones given. */
    private speculate: boolean,
    /** Speculative walkers share futures (same end): the second to reach a container stops. */
    private readonly dedupe: boolean,
  ) {}

  claimContainer(offset: number): boolean {
    if (!this.dedupe) return true;
    if (this.claimed.has(offset)) return false;
    this.claimed.add(offset);
    return true;
  }

  /** Keep the bytes [offset, offset + length) when they go by. */
  want(offset: number, length: number): void {
    const end = Math.min(this.size, offset + Math.max(0, length));
    if (offset >= 0 && end > offset && offset >= this.windowEnd)
      this.wanted.push({ offset, data: Buffer.alloc(end - offset), filled: 0 });
  }

  /** Run the fatbin reader over [start, start + length) as the bytes arrive. */
  async walk(name: string, start: number, length: number): Promise<void> {
    const walker = new Walker(this, this.size);
    this.walkers.push(walker);
    this.started++;
    readFatbinSection(walker, name, start, length).then(
      () => walker.finish(),
      () => walker.finish(), // a speculative walk that runs into other data ends here
    );
    await this.drive(walker);
  }

  async feed(data: Buffer): Promise<void> {
    const start = this.windowEnd;
    this.segments.push({ start, data });
    this.windowEnd += data.length;
    this.keepWanted(start, data);
    for (const walker of this.walkers) await this.drive(walker);
    if (this.speculate) {
      this.keepAroundNames(start, data);
      await this.startAtMagic(start, data);
    }
    this.walkers.splice(0, this.walkers.length, ...this.walkers.filter((w) => !w.finished));
    this.trim();
    if (this.kept.bytes > MAX_KEPT_BYTES || this.started > MAX_WALKERS) this.speculate = false;
  }

  /** The stream ended: every walk still waiting asked for bytes past the end. */
  end(): void {
    for (const walker of this.walkers) {
      const pending = walker.pending;
      walker.pending = null;
      pending?.reject(new ScanError("truncated", "the stream ended before the bytes a header claims"));
    }
  }

  private keepAroundNames(start: number, data: Buffer): void {
    const tail = this.namesTail;
    const joined = tail.length ? Buffer.concat([tail, data]) : data;
    const base = start - tail.length;
    for (let at = joined.indexOf(SHSTRTAB); at >= 0; at = joined.indexOf(SHSTRTAB, at + 1)) {
      if (++this.nameSightings > MAX_NAME_SIGHTINGS) break;
      this.wantAround(base + at - NAMES_AROUND, 2 * NAMES_AROUND);
    }
    this.namesTail = Buffer.from(joined.subarray(Math.max(0, joined.length - SHSTRTAB.length + 1)));
  }

  /** Keep [offset, offset + length): the part already here from the held segments, the rest as it comes. */
  private wantAround(offset: number, length: number): void {
    const held = this.segments[0]?.start ?? this.windowEnd;
    const from = Math.max(0, offset, held);
    const end = Math.min(this.size, offset + length);
    if (end <= from) return;
    const data = Buffer.alloc(end - from);
    let filled = 0;
    for (const segment of this.segments) {
      const segmentEnd = segment.start + segment.data.length;
      if (segmentEnd <= from + filled || segment.start >= end) continue;
      filled += segment.data.copy(
        data,
        filled,
        from + filled - segment.start,
        Math.min(end, segmentEnd) - segment.start,
      );
    }
    if (filled === data.length) this.kept.addFixed(from, data);
    else this.wanted.push({ offset: from, data, filled });
  }

  private async startAtMagic(start: number, data: Buffer): Promise<void> {
    // The last 3 bytes of the previous segment may begin a magic that ends in this one.
    const tail = this.magicTail;
    const joined = tail.length ? Buffer.concat([tail, data]) : data;
    const base = start - tail.length;
    for (let at = joined.indexOf(MAGIC); at >= 0 && this.speculate; at = joined.indexOf(MAGIC, at + 1)) {
      const offset = base + at;
      if (!this.claimed.has(offset)) await this.walk(".nv_fatbin", offset, this.size - offset);
      if (this.started > MAX_WALKERS) this.speculate = false;
    }
    this.magicTail = Buffer.from(joined.subarray(Math.max(0, joined.length - 3)));
  }

  /** Answer the walker's requests while the bytes they need are here. */
  private async drive(walker: Walker): Promise<void> {
    for (;;) {
      await walker.settled();
      const pending = walker.pending;
      if (walker.finished || !pending) return;
      if (pending.kind === "bytes") {
        if (pending.offset + pending.length > this.windowEnd) return;
        const data = this.bytesAt(pending.offset, pending.length);
        walker.pending = null;
        if (!data) pending.reject(new WalkTaken());
        else {
          this.kept.add(pending.offset, data);
          pending.resolve(data);
        }
      } else if (!this.scanPadding(walker, pending)) return;
    }
  }

  /** Advance a padding scan over the bytes here; true when it has its answer. */
  private scanPadding(walker: Walker, scan: PendingScan): boolean {
    while (scan.at + 8 <= scan.end && scan.at + 8 <= this.windowEnd) {
      const segment = this.segments.find((s) => s.start <= scan.at && scan.at < s.start + s.data.length);
      const local = segment ? scan.at - segment.start : -1;
      if (segment && local + 8 <= segment.data.length) {
        // Whole words inside this segment: compare in place, no copies.
        const limit = Math.min(segment.data.length, scan.end - segment.start);
        let i = local;
        while (i + 8 <= limit && segment.data.readUInt32LE(i) === 0 && segment.data.readUInt32LE(i + 4) === 0)
          i += 8;
        scan.at = segment.start + i;
        if (i + 8 <= limit) break; // a word that is not zero
        continue;
      }
      const word = this.bytesAt(scan.at, 8); // a word across two segments, or already dropped
      if (!word) {
        walker.pending = null;
        scan.reject(new WalkTaken());
        return true;
      }
      if (word.readBigUInt64LE(0) !== 0n) break;
      scan.at += 8;
    }
    if (scan.at + 8 <= scan.end && scan.at + 8 > this.windowEnd) return false; // needs more bytes
    const found = scan.at + 8 <= scan.end ? scan.at : scan.end;
    this.kept.padding.set(scan.from, [found, scan.end]);
    walker.pending = null;
    scan.resolve(found);
    return true;
  }

  /** [offset, offset + length) from the segments still held, or the kept bytes; null if gone. */
  private bytesAt(offset: number, length: number): Buffer | null {
    const parts: Buffer[] = [];
    let at = offset;
    const end = offset + length;
    for (const segment of this.segments) {
      const segmentEnd = segment.start + segment.data.length;
      if (segmentEnd <= at || segment.start >= end) continue;
      if (segment.start > at) break;
      const slice = segment.data.subarray(at - segment.start, Math.min(end, segmentEnd) - segment.start);
      parts.push(slice);
      at += slice.length;
      if (at >= end) break;
    }
    if (at >= end) return parts.length === 1 ? Buffer.from(parts[0] as Buffer) : Buffer.concat(parts);
    return this.kept.find(offset, length);
  }

  /** Copy what this segment holds of each fixed range; a complete range joins the kept bytes. */
  private keepWanted(start: number, data: Buffer): void {
    const end = start + data.length;
    for (const want of this.wanted) {
      const from = want.offset + want.filled;
      const wantEnd = want.offset + want.data.length;
      if (from >= wantEnd || from >= end || wantEnd <= start) continue;
      const copied = data.copy(want.data, want.filled, from - start, Math.min(wantEnd, end) - start);
      want.filled += copied;
      if (want.filled === want.data.length) this.kept.addFixed(want.offset, want.data);
    }
  }

  /** Drop segments no pending read can still reach. */
  private trim(): void {
    let keepFrom = this.windowEnd - RETAIN;
    for (const walker of this.walkers) {
      const pending = walker.pending;
      if (pending) keepFrom = Math.min(keepFrom, pending.kind === "bytes" ? pending.offset : pending.at);
    }
    while (this.segments.length > 1) {
      const first = this.segments[0] as { start: number; data: Buffer };
      if (first.start + first.data.length > keepFrom) break;
      this.segments.shift();
    }
  }
}

/** [offset, offset + length) cut to the file: reads before 0 or past the end keep nothing. */
function clamp(offset: number, length: number, size: number): { offset: number; length: number } {
  const from = Math.max(0, offset);
  return { offset: from, length: Math.max(0, Math.min(size, offset + length) - from) };
}

/** Where the section header table starts, from the ELF header; null if the header says nothing usable. */
function sectionTableOffset(head: Buffer): number | null {
  if (head.length < 64 || !isElfMagic(head) || head[4] !== 2 || head[5] !== 1) return null;
  const offset = Number(head.readBigUInt64LE(0x28));
  return Number.isSafeInteger(offset) && offset > 0 ? offset : null;
}

type FirstLook = { kind: "elf" } | { kind: "archive"; bytes: Buffer } | { kind: "other" };

/**
 * The first pass: look at the first bytes, then (for an ELF file) stream on with speculation, or
 * (an ar archive) keep the whole file, or (anything else) stop reading.
 */
async function firstPass(file: StreamedFile, pass: Pass, fixed: { offset: number; length: number }[]) {
  const held: Buffer[] = [];
  let heldBytes = 0;
  let look: FirstLook | null = null;
  let seen = 0;
  for await (const chunk of chunksOf(file)) {
    seen += chunk.length;
    if (seen > file.size)
      throw new ScanError("corrupt", `the stream is longer than the ${file.size} bytes declared`);
    if (look?.kind === "archive") {
      held.push(chunk);
      continue;
    }
    if (look === null) {
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < Math.min(64, file.size)) continue;
      const head = Buffer.concat(held);
      look = classify(head, file.size);
      if (look.kind === "other") return look;
      if (look.kind === "archive") {
        if (file.size > MAX_BUFFERED_ARCHIVE)
          throw new ScanError(
            "unsupported",
            `a static archive of ${file.size} bytes is not read from a stream`,
          );
        continue;
      }
      const table = sectionTableOffset(head);
      if (table !== null) {
        fixed.push(clamp(table, SECTION_TABLE_MAX, file.size));
        fixed.push(clamp(table - NAME_TABLE_WINDOW, NAME_TABLE_WINDOW, file.size));
      }
      for (const want of fixed) pass.want(want.offset, want.length);
      await feedAll(pass, head);
      held.length = 0;
      continue;
    }
    await feedAll(pass, chunk);
  }
  pass.end();
  if (seen !== file.size)
    throw new ScanError("truncated", `the stream ended at ${seen} of the ${file.size} bytes declared`);
  if (look === null) look = classify(Buffer.concat(held), file.size);
  if (look.kind === "archive") return { kind: "archive" as const, bytes: Buffer.concat(held) };
  return look;
}

function classify(head: Buffer, size: number): FirstLook {
  const magic = head.subarray(0, Math.min(8, size));
  if (magic.toString("latin1") === AR_MAGIC) return { kind: "archive", bytes: Buffer.alloc(0) };
  return isElfMagic(magic) ? { kind: "elf" } : { kind: "other" };
}

async function feedAll(pass: Pass, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length; at += SEGMENT) await pass.feed(data.subarray(at, at + SEGMENT));
}

/** A later pass: only the fixed ranges and the walks of the sections now known. */
async function laterPass(file: StreamedFile, pass: Pass): Promise<void> {
  let seen = 0;
  for await (const chunk of chunksOf(file)) {
    seen += chunk.length;
    if (seen > file.size)
      throw new ScanError("corrupt", `the stream is longer than the ${file.size} bytes declared`);
    await feedAll(pass, chunk);
  }
  pass.end();
  if (seen !== file.size)
    throw new ScanError("truncated", `the stream ended at ${seen} of the ${file.size} bytes declared`);
}

interface KnownSection {
  name: string;
  offset: number;
  size: number;
}

async function knownFatbinSections(source: SparseSource): Promise<KnownSection[] | null> {
  try {
    const elf = await readElfFile(source, 0, source.size);
    const wanted = fatbinSections(elf.kind);
    return elf.sections
      .filter((s) => wanted.has(s.name) && s.hasBits && s.size > 0 && s.offset + s.size <= source.size)
      .map((s) => ({ name: s.name, offset: s.offset, size: s.size }));
  } catch (error) {
    if (error instanceof MissingBytes) return null;
    throw error;
  }
}

/**
 * scanFile's answer for bytes that arrive as a stream. Throws only what the stream itself threw
 * (a network error), and a ScanError the stream raised is the file's error.
 */
export async function scanStream(file: StreamedFile): Promise<StreamScan> {
  const kept = new KeptBytes();
  const source = new SparseSource(file.size, kept);
  const fixed = [clamp(0, 64, file.size)];
  let sections: KnownSection[] | null = null;
  try {
    for (let passes = 1; passes <= MAX_PASSES; passes++) {
      const pass = new Pass(file.size, kept, passes === 1, passes === 1);
      if (passes === 1) {
        const look = await firstPass(file, pass, fixed);
        if (look.kind === "other") throw new ScanError("not-elf", "not an ELF file or ar archive");
        if (look.kind === "archive") return { ...(await scanBuffer(look.bytes, file.path)), passes };
      } else {
        for (const want of fixed) pass.want(want.offset, want.length);
        for (const section of sections ?? []) void pass.walk(section.name, section.offset, section.size);
        await laterPass(file, pass);
      }
      try {
        const entries = await entriesOfSource(source);
        return { path: file.path, sizeBytes: file.size, entries, error: null, passes };
      } catch (error) {
        if (!(error instanceof MissingBytes)) throw error;
        // Once the section table reads, the next pass walks exactly its fatbin sections.
        sections ??= await knownFatbinSections(source);
        if (!sections) fixed.push(clamp(error.offset, Math.max(error.length, 64), file.size));
      }
    }
    throw new ScanError(
      "unsupported",
      `the file's layout needed more than ${MAX_PASSES} passes over its bytes`,
    );
  } catch (error) {
    if (error instanceof SourceFailure) throw error.cause;
    return { path: file.path, sizeBytes: file.size, entries: [], error: scanErrorOf(error), passes: 0 };
  }
}
