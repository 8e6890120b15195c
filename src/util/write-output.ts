/**
 * Writing a file the user asked for (--save, --sarif, --junit, --html): the path may lie anywhere
 * the user chose, but it is written atomically and never through a link or into a FIFO or device
 * (which would block or write elsewhere). Failures are UserErrors.
 */
import { lstatSync } from "node:fs";
import { UserError } from "../errors.js";
import { writeFailure, writeFileAtomic } from "./safe-write.js";

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
