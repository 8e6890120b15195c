/**
 * A wheel's CUDA code without installing it: its zip directory, then only its shared libraries
 * inflated as streams and scanned (src/fatbin/stream-scan.ts), never written to disk. A local
 * file or a URL: over HTTP, with Range requests where the server has them (the directory, then
 * each library's bytes), else the whole body read once front to back.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { isBinaryCandidate } from "../fatbin/scan-paths.js";
import { scanStream, type StreamScan } from "../fatbin/stream-scan.js";
import { ScanError } from "../fatbin/errors.js";
import { UserError, errorMessage } from "../errors.js";
import { FetchError, HttpClient, showUrl } from "./http.js";
import { HttpRangeFile, LocalFile, type RemoteFile } from "./remote-file.js";
import { memberBytes, memberDataOffset, readZipDirectory, type ZipMember } from "./zip.js";
import { zipMembersInStream, type StreamedMember } from "./zip-stream.js";
import { parseWheelName, type WheelName } from "./wheel-tags.js";
import { parseVariantJson, type VariantMetadata } from "./variant.js";

export interface WheelScan {
  /** The path or URL given. */
  location: string;
  filename: string;
  wheel: WheelName | null;
  sizeBytes: number | null;
  /** Body bytes fetched over the network for this wheel (0 for a local file). */
  bytesFetched: number;
  /** file: read from disk; ranges: HTTP Range requests; stream: the whole body, once. */
  transfer: "file" | "ranges" | "stream";
  members: number;
  /** Every shared library, object and archive in the wheel, scanned; path = the member's name. */
  libraries: StreamScan[];
  /** *.dist-info/variant.json, when the wheel has one. */
  variant: VariantMetadata | null;
  /** variant.json that could not be read. */
  variantError: string | null;
  /** The file's SHA-256, when every byte of it went by (a local file, a streamed URL). */
  sha256: string | null;
}

interface WheelScanOptions {
  client?: HttpClient;
  /** Libraries read at once (over HTTP, each is one request). */
  concurrency?: number;
  /** Compute the SHA-256 of a local file (it is read whole once more). */
  hashLocal?: boolean;
}

const MAX_VARIANT_JSON = 1024 * 1024;

function isVariantJson(name: string): boolean {
  return /^[^/]+\.dist-info\/variant\.json$/.test(name);
}

function isLibrary(member: ZipMember): boolean {
  return !member.name.endsWith("/") && isBinaryCandidate(basename(member.name));
}

function wheelFilename(location: string): string {
  try {
    if (/^https?:\/\//.test(location))
      return decodeURIComponent(new URL(location).pathname.split("/").pop() ?? "");
  } catch {
    // fall through
  }
  return basename(location);
}

/** Scans a wheel at a path or an http(s) URL. Throws a UserError when it is not a readable wheel. */
export async function scanWheel(location: string, options: WheelScanOptions = {}): Promise<WheelScan> {
  const filename = wheelFilename(location);
  const base = { location, filename, wheel: parseWheelName(filename) };
  try {
    if (/^https?:\/\//i.test(location)) {
      const client = options.client ?? new HttpClient();
      const opened = await HttpRangeFile.open(client, location);
      if (opened.kind === "ranges")
        return { ...base, ...(await scanRandomAccess(opened.file, "ranges", options)) };
      return { ...base, ...(await scanFrontToBack(opened.response.body, opened.size)) };
    }
    const file = await LocalFile.open(location);
    try {
      const result = await scanRandomAccess(file, "file", options);
      return { ...base, ...result, sha256: options.hashLocal ? await sha256Of(file) : null };
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof UserError) throw error;
    if (error instanceof ScanError)
      throw new UserError(
        `${showUrl(location)}: not a readable wheel (${error.message})`,
        "check that it is a .whl file",
      );
    const code = (error as { code?: string } | null)?.code;
    if (code === "ENOENT" || code === "EACCES" || code === "EISDIR")
      throw new UserError(`cannot read ${location}: ${errorMessage(error)}`, "check the path");
    throw error;
  }
}

async function sha256Of(file: RemoteFile): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of file.stream(0, file.size)) hash.update(chunk);
  return hash.digest("hex");
}

type ScanPart = Omit<WheelScan, "location" | "filename" | "wheel">;

/** A file with random access: the directory first, then each library's bytes alone. */
async function scanRandomAccess(
  file: RemoteFile,
  transfer: "file" | "ranges",
  options: WheelScanOptions,
): Promise<ScanPart> {
  const directory = await readZipDirectory(file);
  const libraries = directory.members.filter(isLibrary);
  const results = new Array<StreamScan>(libraries.length);
  let next = 0;
  const worker = async () => {
    while (next < libraries.length) {
      const index = next++;
      const member = libraries[index] as ZipMember;
      const start = await memberDataOffset(file, member);
      results[index] = await scanStream({
        path: member.name,
        size: member.size,
        open: () => memberBytes(member, file.stream(start, member.compressedSize)),
      });
    }
  };
  const concurrency = options.concurrency ?? (transfer === "ranges" ? 4 : 2);
  await Promise.all(Array.from({ length: Math.min(concurrency, libraries.length) }, worker));
  const variantMember = directory.members.find((m) => isVariantJson(m.name));
  let variant: VariantMetadata | null = null;
  let variantError: string | null = null;
  if (variantMember) {
    try {
      if (variantMember.size > MAX_VARIANT_JSON) throw new Error(`${variantMember.size} bytes`);
      const start = await memberDataOffset(file, variantMember);
      variant = parseVariantJson(
        await collect(memberBytes(variantMember, file.stream(start, variantMember.compressedSize))),
      );
    } catch (error) {
      variantError = `${variantMember.name}: ${errorMessage(error)}`;
    }
  }
  return {
    sizeBytes: file.size,
    bytesFetched: file.bytesFetched(),
    transfer,
    members: directory.members.length,
    libraries: results,
    variant,
    variantError,
    sha256: null,
  };
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts).toString("utf8");
}

/** A body read once, front to back: each library scanned as it goes by, the rest skipped. */
async function scanFrontToBack(body: AsyncIterable<Buffer>, size: number | null): Promise<ScanPart> {
  let fetched = 0;
  const hash = createHash("sha256");
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      fetched += chunk.length;
      hash.update(chunk);
      yield chunk;
    }
  }
  const libraries: StreamScan[] = [];
  let variant: VariantMetadata | null = null;
  let variantError: string | null = null;
  let members = 0;
  for await (const member of zipMembersInStream(counted())) {
    members++;
    if (isLibrary(member))
      libraries.push(await scanStream({ path: member.name, size: member.size, open: onlyOnce(member) }));
    else if (isVariantJson(member.name)) {
      try {
        if (member.size > MAX_VARIANT_JSON) throw new Error(`${member.size} bytes`);
        variant = parseVariantJson(await collect(memberBytes(member, member.compressed)));
      } catch (error) {
        variantError = `${member.name}: ${errorMessage(error)}`;
      }
    }
  }
  if (size !== null && fetched !== size)
    throw new FetchError(`the wheel's body was ${fetched} bytes, not the ${size} announced`, null);
  return {
    sizeBytes: fetched,
    bytesFetched: fetched,
    transfer: "stream",
    members,
    libraries,
    variant,
    variantError,
    sha256: hash.digest("hex"),
  };
}

/** A member of a body read once can be streamed once: a second pass is not possible. */
function onlyOnce(member: StreamedMember): () => AsyncIterable<Buffer> {
  let opened = false;
  return () => {
    if (opened)
      throw new ScanError(
        "unsupported",
        "its layout needs a second pass over its bytes, which a server without Range requests cannot give",
      );
    opened = true;
    return memberBytes(member, member.compressed);
  };
}
