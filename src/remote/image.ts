/**
 * A container image's CUDA code without pulling or running it: its layers streamed in order
 * (gzip or plain tar; zstd where Node has it), each shared library scanned as it goes by
 * (src/fatbin/stream-scan.ts), nothing written to disk. Whiteouts are honoured as the OCI image
 * spec defines them (layer.md, "Whiteouts"): `.wh.NAME` hides NAME of the layers below,
 * `.wh..wh..opq` hides everything below in its directory, and a file or link put where a lower
 * layer had a directory hides that directory's files. A library that a later layer removes is not
 * reported.
 *
 * Sources: a `docker save` archive (legacy manifest.json, or the OCI layout Docker 25 writes), an
 * OCI image layout directory or archive, and a registry (src/remote/registry.ts).
 */
import { createHash } from "node:crypto";
import { createGunzip } from "node:zlib";
import * as zlib from "node:zlib";
import { Readable } from "node:stream";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ScanError } from "../fatbin/errors.js";
import { isBinaryCandidate } from "../fatbin/scan-paths.js";
import { scanStream, type StreamScan } from "../fatbin/stream-scan.js";
import { UserError, errorMessage } from "../errors.js";
import { LocalFile } from "./remote-file.js";
import { indexTarFile, normalizeTarPath, tarEntries, type TarEntry, type TarIndexEntry } from "./tar.js";
import {
  MEDIA,
  ImageDocumentError,
  parseDockerSaveManifest,
  parseImageDocument,
  pickPlatform,
  type Descriptor,
} from "./oci.js";
import type { CpuArch } from "./wheel-tags.js";

export interface ImageLayer {
  /** sha256:... where the source names it (verified as the bytes go by), else null. */
  digest: string | null;
  size: number | null;
  /** The layer's bytes as stored (compressed or not). */
  open(): AsyncIterable<Buffer>;
}

export interface ImageSource {
  ref: string;
  kind: "docker-archive" | "oci-layout" | "registry";
  layers: ImageLayer[];
  /** Body bytes fetched over the network so far (0 for files on disk). */
  bytesFetched(): number;
  close(): Promise<void>;
}

interface ImageLibrary extends StreamScan {
  /** Index of the layer the file comes from (0 = the base). */
  layer: number;
}

export interface ImageScan {
  ref: string;
  kind: ImageSource["kind"];
  layers: number;
  /** Files that looked like libraries (by name), in every layer. */
  filesExamined: number;
  /** The libraries the final image has (whited-out ones removed), by path. */
  libraries: ImageLibrary[];
  /** Libraries scanned in a lower layer and removed by a later one. */
  removed: string[];
  /** Entries whose path leaves the root ("../"): skipped. */
  unsafePaths: string[];
  /** Bytes of layers read (as stored). */
  layerBytes: number;
  bytesFetched: number;
}

/**
 * The layer decompressed by its first bytes: gzip, zstd, or a plain tar. A decompression bomb needs
 * no bound of its own here: deflate cannot expand more than ~1,032:1, so what is inflated is bounded
 * by the bytes fetched (the HTTP client's cap) and the deadline; and nothing is kept but headers.
 */
async function* decompressed(
  source: AsyncIterable<Buffer>,
  counter: { stored: number },
): AsyncGenerator<Buffer> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return;
  const head = first.value;
  const rest = (async function* () {
    counter.stored += head.length;
    yield head;
    for (;;) {
      const step = await iterator.next();
      if (step.done) return;
      counter.stored += step.value.length;
      yield step.value;
    }
  })();
  let inflater: NodeJS.ReadWriteStream | null = null;
  if (head[0] === 0x1f && head[1] === 0x8b) inflater = createGunzip({ chunkSize: 256 * 1024 });
  else if (head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528) {
    const make = (zlib as unknown as { createZstdDecompress?: () => NodeJS.ReadWriteStream })
      .createZstdDecompress;
    if (!make) throw new ScanError("unsupported", "a zstd-compressed layer needs Node >= 22.15 to be read");
    inflater = make();
  }
  if (!inflater) {
    yield* rest;
    return;
  }
  const input = Readable.from(rest);
  const output = input.pipe(inflater);
  input.on("error", (error) => (output as unknown as Readable).destroy(error));
  try {
    yield* output as AsyncIterable<Buffer>;
  } finally {
    input.destroy();
    (output as unknown as Readable).destroy();
  }
}

/** The layer's stored bytes, hashed as they go by; the digest is checked once all went by. */
function verified(
  layer: ImageLayer,
  index: number,
): { stream: AsyncIterable<Buffer>; finish: () => Promise<void>; abort: () => Promise<void> } {
  const hash = createHash("sha256");
  const iterator = layer.open()[Symbol.asyncIterator]();
  let done = false;
  const stream = {
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<Buffer>> {
        const step = await iterator.next();
        if (step.done) done = true;
        else hash.update(step.value);
        return step;
      },
      async return(): Promise<IteratorResult<Buffer>> {
        return { done: true, value: undefined };
      },
    }),
  };
  return {
    stream,
    async finish() {
      // A tar ends before its blob does (zero blocks, gzip trailer): read the rest for the digest.
      while (!done) {
        const step = await iterator.next();
        if (step.done) done = true;
        else hash.update(step.value);
      }
      const digest = `sha256:${hash.digest("hex")}`;
      if (layer.digest !== null && digest !== layer.digest)
        throw new UserError(
          `layer ${index + 1}: its bytes hash to ${digest.slice(0, 19)}..., not ${layer.digest.slice(0, 19)}...`,
          "the image is damaged or was changed",
        );
    },
    async abort() {
      if (!done) await iterator.return?.();
    },
  };
}

interface Found {
  scan: StreamScan;
  layer: number;
}

/** Remove what layer `layer` hides of the layers below: `path` itself and everything under it. */
function hide(
  files: Map<string, Found>,
  path: string,
  layer: number,
  removed: Set<string>,
  contentsOnly = false,
): void {
  for (const [key, found] of files) {
    if (found.layer >= layer) continue;
    if ((!contentsOnly && key === path) || key.startsWith(`${path}/`) || path === "") {
      files.delete(key);
      removed.add(key);
    }
  }
}

async function scanLayer(
  layer: ImageLayer,
  index: number,
  files: Map<string, Found>,
  result: ImageScan,
  removed: Set<string>,
) {
  const { stream, finish, abort } = verified(layer, index);
  const counter = { stored: 0 };
  try {
    await readLayerEntries(
      tarEntries(decompressed(stream, counter), { onUnsafePath: (path) => result.unsafePaths.push(path) }),
      index,
      files,
      result,
      removed,
    );
  } catch (error) {
    await abort();
    throw error;
  }
  await finish();
  result.layerBytes += counter.stored;
}

async function readLayerEntries(
  entries: AsyncIterable<TarEntry>,
  index: number,
  files: Map<string, Found>,
  result: ImageScan,
  removed: Set<string>,
): Promise<void> {
  for await (const entry of entries) {
    const name = basename(entry.path);
    const dir = entry.path.includes("/") ? dirname(entry.path) : "";
    if (name === ".wh..wh..opq") {
      hide(files, dir, index, removed, true);
      continue;
    }
    if (name.startsWith(".wh.")) {
      hide(files, dir ? `${dir}/${name.slice(4)}` : name.slice(4), index, removed);
      continue;
    }
    if (entry.type === "directory") continue;
    hide(files, entry.path, index, removed);
    if (entry.type === "hardlink" && entry.linkPath) {
      const target = files.get(normalizeTarPath(entry.linkPath) ?? "");
      if (target && isBinaryCandidate(name))
        files.set(entry.path, { scan: { ...target.scan, path: entry.path }, layer: index });
      continue;
    }
    if (entry.type !== "file" || !isBinaryCandidate(name)) continue;
    result.filesExamined++;
    let opened = false;
    const scan = await scanStream({
      path: entry.path,
      size: entry.size,
      open: () => {
        if (opened)
          throw new ScanError(
            "unsupported",
            "its layout needs a second pass, which a layer stream cannot give",
          );
        opened = true;
        return entry.body;
      },
    });
    files.set(entry.path, { scan, layer: index });
  }
}

/** Every layer in order; the libraries of the image as it ends up. */
export async function scanImage(
  source: ImageSource,
  onLayer?: (index: number, total: number) => void,
): Promise<ImageScan> {
  const result: ImageScan = {
    ref: source.ref,
    kind: source.kind,
    layers: source.layers.length,
    filesExamined: 0,
    libraries: [],
    removed: [],
    unsafePaths: [],
    layerBytes: 0,
    bytesFetched: 0,
  };
  const files = new Map<string, Found>();
  const removed = new Set<string>();
  try {
    for (const [index, layer] of source.layers.entries()) {
      onLayer?.(index, source.layers.length);
      try {
        await scanLayer(layer, index, files, result, removed);
      } catch (error) {
        if (error instanceof ScanError)
          throw new UserError(
            `${source.ref}: layer ${index + 1} of ${source.layers.length}: ${error.message}`,
            "the image may be damaged",
          );
        throw error;
      }
    }
  } finally {
    result.bytesFetched = source.bytesFetched();
    await source.close();
  }
  result.libraries = [...files.entries()]
    .map(([path, found]) => ({ ...found.scan, path, layer: found.layer }))
    .sort((a, b) => a.path.localeCompare(b.path));
  result.removed = [...removed].filter((path) => !files.has(path)).sort();
  return result;
}

function notAnImage(path: string, why: string): UserError {
  return new UserError(
    `${path}: not an image archive gpuprep reads (${why})`,
    "give a `docker save` tar, an OCI layout directory or archive, or docker://REGISTRY/NAME:TAG",
  );
}

/** A file of a tar archive, read in place. */
function archiveLayer(file: LocalFile, entry: TarIndexEntry, digest: string | null): ImageLayer {
  return { digest, size: entry.size, open: () => file.stream(entry.offset, entry.size) };
}

function describeError(error: unknown): string {
  return error instanceof ImageDocumentError ? error.message : errorMessage(error);
}

/** The layers of an OCI layout (index.json, blobs/sha256/...) read through `blob(digest)`. */
async function ociLayers(
  readText: (path: string) => Promise<string>,
  blob: (descriptor: Descriptor) => ImageLayer,
  arch: CpuArch,
): Promise<ImageLayer[]> {
  let document = parseImageDocument(await readText("index.json"), MEDIA.ociIndex);
  for (let depth = 0; document.kind === "index"; depth++) {
    if (depth > 4) throw new ImageDocumentError("indexes nested more than 4 deep");
    const chosen = pickPlatform(document.manifests, arch);
    document = parseImageDocument(await readText(`blobs/sha256/${chosen.digest.slice(7)}`), chosen.mediaType);
  }
  return document.layers.map(blob);
}

/** A `docker save` archive or an OCI layout archive (.tar), read in place. */
export async function openImageArchive(path: string, arch: CpuArch): Promise<ImageSource> {
  const file = await LocalFile.open(path);
  try {
    const index = await indexTarFile(file);
    const text = async (name: string) => {
      const entry = index.get(name);
      if (!entry) throw new ImageDocumentError(`it has no ${name}`);
      if (entry.size > 4 * 1024 * 1024) throw new ImageDocumentError(`${name} is larger than 4 MiB`);
      return (await file.read(entry.offset, entry.size, name)).toString("utf8");
    };
    let layers: ImageLayer[];
    if (index.has("index.json") && index.has("oci-layout")) {
      layers = await ociLayers(
        text,
        (d) => {
          const entry = index.get(`blobs/sha256/${d.digest.slice(7)}`);
          if (!entry) throw new ImageDocumentError(`layer ${d.digest.slice(0, 19)}... is not in the archive`);
          return archiveLayer(file, entry, d.digest);
        },
        arch,
      );
    } else if (index.has("manifest.json")) {
      const [image] = parseDockerSaveManifest(await text("manifest.json"));
      if (!image) throw new ImageDocumentError("manifest.json lists no image");
      layers = image.layers.map((layer) => {
        const entry = index.get(layer.replace(/^\.?\/+/, ""));
        if (!entry) throw new ImageDocumentError(`layer ${layer.slice(0, 80)} is not in the archive`);
        const digest = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(layer)?.[1];
        return archiveLayer(file, entry, digest ? `sha256:${digest}` : null);
      });
    } else throw new ImageDocumentError("neither manifest.json nor index.json with oci-layout");
    return { ref: path, kind: "docker-archive", layers, bytesFetched: () => 0, close: () => file.close() };
  } catch (error) {
    await file.close();
    if (error instanceof ImageDocumentError || error instanceof ScanError)
      throw notAnImage(path, describeError(error));
    throw error;
  }
}

/** An OCI image layout directory (oci-layout, index.json, blobs/). */
export async function openOciLayout(dir: string, arch: CpuArch): Promise<ImageSource> {
  if (!existsSync(join(dir, "oci-layout"))) throw notAnImage(dir, "no oci-layout file");
  const opened: LocalFile[] = [];
  try {
    const layers = await ociLayers(
      async (name) => {
        const path = join(dir, name);
        if (statSync(path).size > 4 * 1024 * 1024)
          throw new ImageDocumentError(`${name} is larger than 4 MiB`);
        return readFileSync(path, "utf8");
      },
      (d) => ({
        digest: d.digest,
        size: d.size,
        open: () =>
          (async function* () {
            const file = await LocalFile.open(join(dir, "blobs", "sha256", d.digest.slice(7)));
            opened.push(file);
            yield* file.stream(0, file.size);
          })(),
      }),
      arch,
    );
    return {
      ref: dir,
      kind: "oci-layout",
      layers,
      bytesFetched: () => 0,
      close: async () => {
        for (const file of opened) await file.close();
      },
    };
  } catch (error) {
    if (error instanceof ImageDocumentError || (error as { code?: string })?.code === "ENOENT")
      throw notAnImage(dir, describeError(error));
    throw error;
  }
}
