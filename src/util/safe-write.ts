/**
 * Writing files without writing anywhere else, and without ever leaving half a file.
 *
 * - Every directory on the way is opened once, relative to the one above it, with O_DIRECTORY and
 *   O_NOFOLLOW, and held open; everything inside it (checks, temp files, renames) is reached
 *   through /proc/self/fd/N/NAME, which the kernel resolves from the open directory itself, not
 *   from a path: the equivalent of openat/mkdirat/renameat on the descriptor, which Node does not
 *   expose. A directory swapped for a link after it was opened changes nothing (issue 28: 1 of 300
 *   racing inits wrote outside the project when components were checked with lstat and then
 *   opened by path). Inside a project a link anywhere is refused, --force or not, and so is
 *   anything but a directory on the way and a regular file at the end.
 * - A file is written to a temporary file in its own directory (O_EXCL, O_NOFOLLOW), fsynced and
 *   renamed over the target, then the directory is fsynced: a SIGKILL or a full disk leaves
 *   either the old file or the new one, never an empty or cut one, and the temporary file is
 *   removed on every error this process sees. generate/write.ts stages several files this way and
 *   commits them together (its journal).
 * - Without procfs (not Linux) the same steps go by path, each component checked with lstat
 *   first: links are still refused, but a swap between check and use is not excluded there.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, isAbsolute, join } from "node:path";
import { UserError, errorMessage } from "../errors.js";

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A failed write as one line with a hint that names the actual cause. */
export function writeFailure(path: string, error: unknown, fallbackHint: string): UserError {
  if (error instanceof UserError) return error;
  switch (codeOf(error)) {
    case "ENOSPC":
      return new UserError(
        `cannot write ${path}: the disk is full (ENOSPC)`,
        "free space on the filesystem that holds it and run again; the file was left as it was",
      );
    case "EDQUOT":
      return new UserError(
        `cannot write ${path}: your disk quota is used up (EDQUOT)`,
        "free space under your quota and run again; the file was left as it was",
      );
    case "EROFS":
      return new UserError(
        `cannot write ${path}: the filesystem is read-only (EROFS)`,
        "run where the files can be written (a writable copy of the project)",
      );
    case "EACCES":
    case "EPERM":
      return new UserError(
        `cannot write ${path}: permission denied (${codeOf(error)})`,
        `check the permissions of ${dirname(path)} and of the file`,
      );
    default:
      return new UserError(`cannot write ${path}: ${errorMessage(error)}`, fallbackHint);
  }
}

const LINK_HINT =
  "gpuprep writes only regular files inside the project and never follows a link (a cloned repository can plant one); remove or replace the link and run again";

/** The temporary files this module makes: `.NAME.PID.HEX.gpuprep-tmp`, beside their target. */
export const TEMP_FILE = /^\..*\.(\d+)\.[0-9a-f]{8}\.gpuprep-tmp$/;

/** Whether /proc/self/fd/N/NAME reaches NAME inside the directory open as N (Linux with procfs). */
function procFdWorks(): boolean {
  let fd: number | null = null;
  try {
    fd = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
    return statSync(`/proc/self/fd/${fd}/.`).ino === fstatSync(fd).ino;
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
const VIA_DESCRIPTOR = procFdWorks();

function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0"))
    throw new UserError(`refusing to write ${JSON.stringify(name)}: not a file name`, null);
}

/** A directory held open by descriptor; names inside it never go through a path a link could redirect. */
export class HeldDirectory {
  private constructor(
    private readonly fd: number,
    /** The path as the user would say it, for messages only. */
    readonly shown: string,
  ) {}

  /** `path` as named (links in it followed: the user chose it) held open. */
  static open(path: string): HeldDirectory {
    try {
      return new HeldDirectory(openSync(path, constants.O_RDONLY | constants.O_DIRECTORY), path);
    } catch (error) {
      throw writeFailure(path, error, "check that the directory exists and can be read");
    }
  }

  /** Where `name` is, reached through the descriptor. */
  at(name: string): string {
    checkName(name);
    return VIA_DESCRIPTOR ? `/proc/self/fd/${this.fd}/${name}` : join(this.shown, name);
  }

  /** The names in this directory. */
  names(): string[] {
    return readdirSync(VIA_DESCRIPTOR ? `/proc/self/fd/${this.fd}` : this.shown);
  }

  /** What is at `name` (lstat: a link is a link), or null when nothing is. */
  entry(name: string): Stats | null {
    try {
      return lstatSync(this.at(name));
    } catch (error) {
      if (codeOf(error) === "ENOENT") return null;
      throw new UserError(
        `cannot check ${join(this.shown, name)}: ${errorMessage(error)}`,
        "check the permissions",
      );
    }
  }

  /**
   * The subdirectory `name`, made first when `create` and missing, opened with O_NOFOLLOW: a link
   * or a file there is refused. null when it is missing and not to be made.
   */
  subdirectory(name: string, create: boolean, shownRel: string): HeldDirectory | null {
    const shown = join(this.shown, name);
    if (create) {
      try {
        mkdirSync(this.at(name));
      } catch (error) {
        if (codeOf(error) !== "EEXIST") throw writeFailure(shown, error, "check the project's permissions");
      }
    }
    try {
      const fd = openSync(this.at(name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      return new HeldDirectory(fd, shown);
    } catch (error) {
      const code = codeOf(error);
      if (code === "ENOENT" && !create) return null;
      if (code === "ENOTDIR" || code === "ELOOP") {
        const what = this.entry(name)?.isSymbolicLink() ? "is a symbolic link" : "is not a directory";
        throw new UserError(`refusing to write under ${shownRel}: ${shownRel} ${what}`, LINK_HINT);
      }
      throw writeFailure(shown, error, "check the project's permissions");
    }
  }

  /**
   * `content` in a new temporary file beside `name`, fsynced; returns the temporary file's name.
   * Its mode: `mode`, else the current file's, else 0o666 less the umask.
   */
  stage(name: string, content: string | Buffer, mode?: number): string {
    const existing = this.entry(name);
    const keptMode = mode ?? (existing?.isFile() ? existing.mode & 0o7777 : null);
    const temp = `.${name.slice(0, 100)}.${process.pid}.${randomBytes(4).toString("hex")}.gpuprep-tmp`;
    let fd: number | null = null;
    try {
      fd = openSync(
        this.at(temp),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o666,
      );
      if (keptMode !== null) fchmodSync(fd, keptMode);
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
      fsyncSync(fd);
      closeSync(fd);
      fd = null;
      return temp;
    } catch (error) {
      if (fd !== null) closeSync(fd);
      this.remove(temp);
      throw error;
    }
  }

  /** rename(2) of one name over another, both in this directory. */
  rename(from: string, to: string): void {
    renameSync(this.at(from), this.at(to));
  }

  /** Removes `name` if it is there; never throws. */
  remove(name: string): void {
    try {
      unlinkSync(this.at(name));
    } catch {
      // never created, or already gone
    }
  }

  /** Temp file + fsync + rename + directory fsync. The target's own path is never opened. */
  writeAtomic(name: string, content: string | Buffer, mode?: number): void {
    const temp = this.stage(name, content, mode);
    try {
      this.rename(temp, name);
    } catch (error) {
      this.remove(temp);
      throw error;
    }
    this.sync();
  }

  /** Makes renames in this directory durable; some filesystems cannot fsync a directory, which is fine. */
  sync(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // EINVAL on filesystems without directory fsync
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

function projectParts(relPath: string): string[] {
  const parts = relPath.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (isAbsolute(relPath) || parts.includes("..") || parts.length === 0)
    throw new UserError(`refusing to write ${relPath}: not a path inside the project`, null);
  return parts;
}

/**
 * A project's directories, each opened once relative to its parent and held until close(): what
 * one init reads, stages and renames all happens in the directories it checked.
 */
export class ProjectTree {
  private readonly held = new Map<string, HeldDirectory>();
  /** Directories this tree made, in order: removed again (if still empty) when a write is undone. */
  private readonly made: string[] = [];

  constructor(readonly root: string) {
    this.held.set("", HeldDirectory.open(root));
  }

  /** The directory `relDir` ("" or "." for the root); made when `create`, else null when missing. */
  directory(relDir: string, create: boolean): HeldDirectory | null {
    const parts = relDir === "" || relDir === "." ? [] : projectParts(relDir);
    let current = this.held.get("")!;
    for (let i = 0; i < parts.length; i++) {
      const key = parts.slice(0, i + 1).join("/");
      const known = this.held.get(key);
      if (known) {
        current = known;
        continue;
      }
      const made = create && current.entry(parts[i]!) === null;
      const next = current.subdirectory(parts[i]!, create, key);
      if (next === null) return null;
      if (made) this.made.push(key);
      this.held.set(key, next);
      current = next;
    }
    return current;
  }

  /** The held directory of `relPath` and its file name; throws for a link or a non-directory on the way. */
  locate(relPath: string, create: boolean): { dir: HeldDirectory | null; name: string } {
    const parts = projectParts(relPath);
    return { dir: this.directory(parts.slice(0, -1).join("/"), create), name: parts.at(-1)! };
  }

  /** Whether `relPath` is a regular file; false when missing; a link or anything else is refused. */
  isFile(relPath: string): boolean {
    const { dir, name } = this.locate(relPath, false);
    const stats = dir?.entry(name) ?? null;
    if (stats === null) return false;
    if (stats.isSymbolicLink())
      throw new UserError(`refusing to write ${relPath}: ${relPath} is a symbolic link`, LINK_HINT);
    if (!stats.isFile())
      throw new UserError(`refusing to write ${relPath}: ${relPath} is not a regular file`, LINK_HINT);
    return true;
  }

  /** Where `relPath` is, through the held directories (for reading; O_NOFOLLOW is the reader's). */
  pathOf(relPath: string): string | null {
    const { dir, name } = this.locate(relPath, false);
    return dir === null ? null : dir.at(name);
  }

  /** Stages `content` for `relPath` (directories made); returns where the temporary file is. */
  stage(relPath: string, content: string, mode?: number): { dir: HeldDirectory; temp: string; name: string } {
    this.isFile(relPath);
    const { dir, name } = this.locate(relPath, true);
    try {
      return { dir: dir!, temp: dir!.stage(name, content, mode), name };
    } catch (error) {
      throw writeFailure(join(this.root, relPath), error, "check the project directory's permissions");
    }
  }

  /** `relPath` written atomically: checked, directories made, temp file, rename, directory fsync. */
  write(relPath: string, content: string, mode?: number): void {
    const { dir, temp, name } = this.stage(relPath, content, mode);
    try {
      dir.rename(temp, name);
    } catch (error) {
      dir.remove(temp);
      throw writeFailure(join(this.root, relPath), error, "check the project directory's permissions");
    }
    dir.sync();
  }

  /** Removes the directories this tree made that are still empty, deepest first (a write undone). */
  removeMadeDirectories(): void {
    for (const key of [...this.made].reverse()) {
      const parent = this.held.get(key.split("/").slice(0, -1).join("/"));
      try {
        rmdirSync(parent!.at(key.split("/").at(-1)!));
      } catch {
        // not empty (something else is in it now), or gone
      }
    }
    this.made.length = 0;
  }

  close(): void {
    for (const dir of this.held.values()) dir.close();
    this.held.clear();
  }
}

/** Runs `work` with the project's directories held, closing them after. */
export function withProjectTree<T>(root: string, work: (tree: ProjectTree) => T): T {
  const tree = new ProjectTree(root);
  try {
    return work(tree);
  } finally {
    tree.close();
  }
}

/** Creates the directories of `relDir` under `root` one by one, refusing links (also ones made meanwhile). */
export function makeProjectDirs(root: string, relDir: string): void {
  withProjectTree(root, (tree) => tree.directory(relDir, true));
}

interface AtomicWriteOptions {
  /** Permission bits for the file; default: the existing file's, else 0o666 less the umask. */
  mode?: number;
}

/**
 * Temp file + fsync + rename + directory fsync, in `path`'s directory held open (the directory as
 * named; the file's own name is never followed). The target's own path is never opened.
 */
export function writeFileAtomic(
  path: string,
  content: string | Buffer,
  options: AtomicWriteOptions = {},
): void {
  const dir = HeldDirectory.open(dirname(path));
  try {
    dir.writeAtomic(basename(path), content, options.mode);
  } finally {
    dir.close();
  }
}

/** A file inside the project: path checked, directories made, content written atomically. */
export function writeProjectFile(
  root: string,
  relPath: string,
  content: string,
  options: AtomicWriteOptions = {},
): void {
  withProjectTree(root, (tree) => tree.write(relPath, content, options.mode));
}
