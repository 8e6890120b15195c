/**
 * Writing a file the user asked for (--save, --sarif, --junit, --html): the path may lie anywhere
 * the user chose, but it is written atomically and never through a link or into a FIFO or device
 * (which would block or write elsewhere). Failures are UserErrors.
 */
import { accessSync, constants, lstatSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UserError } from "../errors.js";
import { writeFailure, writeFileAtomic } from "./safe-write.js";

/**
 * Called when the flags are parsed, before any work: a report path that cannot be written should
 * fail in a second, not after a ten-minute benchmark run. `kind: "dir"` is a directory gpuprep
 * creates (mkdir -p), so only its nearest existing ancestor has to be a writable directory.
 */
export function checkOutputPath(
  path: string,
  flag: string,
  command: string,
  kind: "file" | "dir" = "file",
): void {
  const fail = (why: string, hint: string): never => {
    throw new UserError(`${command}: ${flag} ${path}: ${why}`, hint);
  };
  if (path === "") fail("empty path", `give ${flag} a path`);
  const stats = lstatOrNull(path);
  if (stats?.isSymbolicLink())
    fail("is a symbolic link; refusing to write through it", "name the file itself");
  if (stats && kind === "file" && !stats.isFile())
    fail("exists and is not a regular file", `give ${flag} a file path`);
  if (stats && kind === "dir" && !stats.isDirectory())
    fail("exists and is not a directory", `give ${flag} a directory`);
  let dir = kind === "dir" && stats ? resolve(path) : dirname(resolve(path));
  if (kind === "dir") while (!lstatOrNull(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const parent = statOrNull(dir);
  if (!parent) fail(`directory ${dir} does not exist`, "create it first, or write somewhere else");
  if (!parent!.isDirectory()) fail(`${dir} is not a directory`, `give ${flag} a path inside a directory`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    fail(`directory ${dir} is not writable`, "check its permissions, or write somewhere else");
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

export function writeOutputFile(path: string, content: string, flag: string): void {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    stats = null; // a new file (a missing directory is reported by the write)
  }
  if (stats?.isSymbolicLink())
    throw new UserError(
      `${flag} ${path}: is a symbolic link; refusing to write through it`,
      `name the file itself`,
    );
  if (stats && !stats.isFile())
    throw new UserError(`${flag} ${path}: exists and is not a regular file`, `give ${flag} a file path`);
  try {
    writeFileAtomic(path, content);
  } catch (error) {
    throw writeFailure(path, error, `check the path given to ${flag}`);
  }
}
