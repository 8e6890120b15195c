/**
 * Reading files a user (or a cloned repository, or another machine) controls: project manifests,
 * --from snapshots, .gpuprep/manifest.json, downloaded index pages. Only regular files, opened
 * with O_NONBLOCK so a FIFO never blocks the open, checked with fstat on the open descriptor (no
 * race with a swapped path), and read up to a cap per kind, never further: a /dev/zero link or a
 * 10 GB file costs one refused open, not the machine's memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync, readlinkSync, realpathSync } from "node:fs";
import { relative, isAbsolute } from "node:path";
import { UserError, errorMessage } from "../errors.js";
import { parseJsonInput } from "./json-input.js";

const MiB = 1024 * 1024;

/**
 * Caps per kind. Manifests a person writes stay far below 4 MiB (a pip-compile output with every
 * hash of a large project is ~1 MiB); uv.lock of a large workspace reaches a few MiB; a snapshot
 * with every binary of an NGC image is ~3 MiB, and fleet snapshots were already capped at 64 MiB.
 */
export const READ_LIMITS = {
  manifest: 4 * MiB,
  lockfile: 32 * MiB,
  snapshot: 64 * MiB,
  /**
   * A Hugging Face config.json: a few KB, an image classifier's id2label for 21k classes ~1 MB
   * (google/vit-base-patch16-224-in21k). 16 MiB is far above any, far below "read whole".
   */
  modelConfig: 16 * MiB,
  /** peft's adapter_config.json: a dozen keys and a list of module names. */
  adapterConfig: 1 * MiB,
  /** refs/main of the HF cache: one 40-character commit hash. */
  hfRef: 256,
  /** A kubeconfig with many contexts and inline certificates stays below 1 MiB. */
  kubeconfig: 4 * MiB,
  /** A token or PEM file named by a kubeconfig (a CA bundle of a few hundred certificates). */
  credential: 1 * MiB,
  /** `kb update`'s overlay: every torch build on the index is ~1 MiB of JSON. */
  kbOverlay: 64 * MiB,
  /** A fleet job file: one small JSON document. */
  fleetJob: 1 * MiB,
  /** A fleet batch job's output: a deflated frame of ~50 KB per node; 256 MiB is ~5,000 nodes. */
  fleetOutput: 256 * MiB,
} as const;

/** Replaces control characters and cuts to `max` characters: safe to print from hostile input. */
export function printablePrefix(text: string, max = 60): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?");
  return clean.length > max ? `${clean.slice(0, max)}… (${text.length} characters)` : clean;
}

/** True when `path` (after resolving every link) lies inside `root` (also resolved). */
export function isInside(root: string, path: string): boolean {
  let realRoot: string;
  let realPath: string;
  try {
    realRoot = realpathSync(root);
    realPath = realpathSync(path);
  } catch {
    return false;
  }
  const rel = relative(realRoot, realPath);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

interface ReadOptions {
  /** Largest size accepted, in bytes. */
  maxBytes: number;
  /** The hint for a file that cannot be read (what the user should check). */
  hint: string;
  /**
   * A directory the file must lie in once every link is resolved (the HF cache: its snapshots
   * link into its blobs, and nowhere else). Checked on the open descriptor, so a link swapped
   * after a check cannot lead outside.
   */
  confineTo?: string;
  /** Refuse a link at the last component too (O_NOFOLLOW): init's reads of its own files. */
  noFollow?: boolean;
  /** The name said in messages, when `path` is a /proc/self/fd/N/NAME path of util/safe-write. */
  shownAs?: string;
}

/**
 * Where an open descriptor really points: /proc/self/fd/N names the file the kernel opened, not
 * the path we asked for. Without procfs (not Linux) the path's realpath, checked just before.
 */
function openedPath(fd: number, path: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return realpathSync(path);
  }
}

function checkConfined(fd: number, openPath: string, path: string, options: ReadOptions): void {
  if (options.confineTo === undefined) return;
  let root: string;
  try {
    root = realpathSync(options.confineTo);
  } catch (error) {
    throw new UserError(`cannot read ${path}: ${errorMessage(error)}`, options.hint);
  }
  const rel = relative(root, openedPath(fd, openPath));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel))
    throw new UserError(`refusing to read ${path}: it leads outside ${options.confineTo}`, options.hint);
}

function describeType(mode: number): string {
  const type = mode & constants.S_IFMT;
  if (type === constants.S_IFDIR) return "a directory";
  if (type === constants.S_IFIFO) return "a FIFO (named pipe)";
  if (type === constants.S_IFCHR || type === constants.S_IFBLK) return "a device";
  if (type === constants.S_IFSOCK) return "a socket";
  return "not a regular file";
}

/** The bytes of a regular file no larger than `maxBytes`; anything else is a one-line UserError. */
export function readRegularFile(openPath: string, options: ReadOptions): Buffer {
  const path = options.shownAs ?? openPath;
  let fd: number;
  try {
    fd = openSync(
      openPath,
      constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow ? constants.O_NOFOLLOW : 0),
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === "ELOOP")
      throw new UserError(`cannot read ${path}: it is a symbolic link`, options.hint);
    throw new UserError(
      `cannot read ${path}: ${errorMessage(error).split(openPath).join(path)}`,
      options.hint,
    );
  }
  try {
    checkConfined(fd, openPath, path, options);
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw new UserError(`cannot read ${path}: it is ${describeType(stats.mode)}`, options.hint);
    // A fast path only (its removal is an equivalent mutant in bench/mutation.mjs): the loop's
    // check below is the guard, since st_size can lie.
    if (stats.size > options.maxBytes) throw tooLarge(path, options);
    // Read at most one chunk past the cap, whatever st_size said: a file that grows after fstat,
    // or one whose st_size lies (/proc files say 0), is still cut off there.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(Math.max(stats.size - total + 1, 64 * 1024), MiB));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > options.maxBytes) throw tooLarge(path, options);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(
      `cannot read ${path}: ${errorMessage(error).split(openPath).join(path)}`,
      options.hint,
    );
  } finally {
    closeSync(fd);
  }
}

function sizeText(bytes: number): string {
  return bytes >= MiB ? `${Math.round(bytes / MiB)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

function tooLarge(path: string, options: ReadOptions): UserError {
  return new UserError(
    `cannot read ${path}: larger than ${sizeText(options.maxBytes)}, more than any such file`,
    options.hint,
  );
}

/** readRegularFile as UTF-8 text. */
export function readTextFile(path: string, options: ReadOptions): string {
  return readRegularFile(path, options).toString("utf8");
}

/**
 * A JSON file: readRegularFile's caps and checks, then util/json-input's parse, whose errors give
 * the position and never a byte of the text (a linked /etc/shadow must not be quoted back).
 */
export function readJsonFile(path: string, options: ReadOptions & { origin?: string }): unknown {
  return parseJsonInput(readTextFile(path, options), options.origin ?? options.shownAs ?? path, options.hint);
}
