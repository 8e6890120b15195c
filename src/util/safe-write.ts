/**
 * Writing files without writing anywhere else, and without ever leaving half a file.
 *
 * - Inside a project, every path component from the project root down is checked with lstat: a
 *   symbolic link anywhere (a cloned repository can plant `scripts -> /etc`, or a dangling
 *   `Dockerfile -> ~/.bashrc`) is refused, --force or not, and so is anything but a directory on
 *   the way and a regular file at the end.
 * - A file is written to a temporary file in its own directory (O_EXCL, O_NOFOLLOW), fsynced and
 *   renamed over the target, then the directory is fsynced: a SIGKILL or a full disk leaves
 *   either the old file or the new one, never an empty or cut one, and the temporary file is
 *   removed on every error this process sees.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
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

/**
 * Checks `relPath` under `root` with lstat, one component at a time. Returns whether the file
 * exists; throws a UserError for a link, a non-directory on the way or a non-regular file.
 */
export function checkProjectPath(root: string, relPath: string): boolean {
  const parts = relPath.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (isAbsolute(relPath) || parts.includes("..") || parts.length === 0)
    throw new UserError(`refusing to write ${relPath}: not a path inside the project`, null);
  let current = root;
  for (let i = 0; i < parts.length; i++) {
    current = join(current, parts[i]!);
    const shown = parts.slice(0, i + 1).join("/");
    let stats;
    try {
      stats = lstatSync(current);
    } catch (error) {
      if (codeOf(error) === "ENOENT") return false;
      throw new UserError(
        `cannot check ${current}: ${errorMessage(error)}`,
        "check the project's permissions",
      );
    }
    if (stats.isSymbolicLink())
      throw new UserError(`refusing to write ${relPath}: ${shown} is a symbolic link`, LINK_HINT);
    const last = i === parts.length - 1;
    if (!last && !stats.isDirectory())
      throw new UserError(`refusing to write ${relPath}: ${shown} is not a directory`, LINK_HINT);
    if (last && !stats.isFile())
      throw new UserError(`refusing to write ${relPath}: ${shown} is not a regular file`, LINK_HINT);
  }
  return true;
}

/** Creates the directories of `relDir` under `root` one by one, refusing links (also ones made meanwhile). */
export function makeProjectDirs(root: string, relDir: string): void {
  let current = root;
  for (const part of relDir.split(/[\\/]+/).filter((p) => p !== "" && p !== ".")) {
    current = join(current, part);
    try {
      mkdirSync(current);
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw writeFailure(current, error, "check the project's permissions");
    }
    const stats = lstatSync(current);
    if (stats.isSymbolicLink() || !stats.isDirectory())
      throw new UserError(
        `refusing to write under ${relDir}: ${current} is not a plain directory`,
        LINK_HINT,
      );
  }
}

export interface AtomicWriteOptions {
  /** Permission bits for the file; default: the existing file's, else 0o666 less the umask. */
  mode?: number;
}

/** Temp file + fsync + rename + directory fsync. The target's own path is never opened. */
export function writeFileAtomic(
  path: string,
  content: string | Buffer,
  options: AtomicWriteOptions = {},
): void {
  const dir = dirname(path);
  let existingMode: number | null = null;
  try {
    const stats = lstatSync(path);
    if (stats.isFile()) existingMode = stats.mode & 0o7777;
  } catch {
    // a new file
  }
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.gpuprep-tmp`);
  let fd: number | null = null;
  try {
    fd = openSync(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o666,
    );
    const mode = options.mode ?? existingMode;
    if (mode !== null) fchmodSync(fd, mode);
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // never created, or already renamed
    }
    throw error;
  }
  syncDirectory(dir);
}

/** Makes the rename itself durable; some filesystems cannot fsync a directory, which is fine. */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL on filesystems without directory fsync
  } finally {
    closeSync(fd);
  }
}

/** A file inside the project: path checked, directories made, content written atomically. */
export function writeProjectFile(
  root: string,
  relPath: string,
  content: string,
  options: AtomicWriteOptions = {},
): void {
  checkProjectPath(root, relPath);
  const relDir = dirname(relPath);
  if (relDir !== ".") makeProjectDirs(root, relDir);
  checkProjectPath(root, relPath);
  const target = join(root, relPath);
  try {
    writeFileAtomic(target, content, options);
  } catch (error) {
    throw writeFailure(target, error, "check the project directory's permissions");
  }
}
