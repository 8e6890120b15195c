/**
 * One writer per project: `.gpuprep/lock` is created with O_EXCL and holds the writer's pid. A
 * second gpuprep finds it and stops with a clear line; a lock whose pid no longer runs (a
 * SIGKILLed init) is stale and taken over. Pids are only meaningful on one host, which is where
 * two inits of one checkout race.
 */
import { closeSync, constants, lstatSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { readTextFile } from "./safe-read.js";
import { checkProjectPath, makeProjectDirs, writeFailure } from "./safe-write.js";

export const LOCK_PATH = ".gpuprep/lock";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as { code?: unknown }).code === "EPERM";
  }
}

function holderOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readTextFile(path, { maxBytes: 64, hint: "" }).trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** An empty lock younger than a few seconds belongs to a writer that has not written its pid yet. */
function justCreated(path: string): boolean {
  try {
    return Date.now() - lstatSync(path).mtimeMs < 5_000;
  } catch {
    return false;
  }
}

/** Takes the project's lock, or throws a UserError naming the pid that holds it. Returns the release. */
export function acquireProjectLock(root: string): () => void {
  makeProjectDirs(root, ".gpuprep");
  const path = join(root, LOCK_PATH);
  for (let attempt = 0; attempt < 2; attempt++) {
    checkProjectPath(root, LOCK_PATH);
    let fd: number;
    try {
      fd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST")
        throw writeFailure(path, error, "check the project's permissions");
      const holder = holderOf(path);
      if (holder !== null ? isRunning(holder) : justCreated(path)) {
        throw new UserError(
          `another gpuprep (pid ${holder}) is writing this project (${path})`,
          "wait for it to finish; if no gpuprep runs, delete the lock file",
        );
      }
      // Stale: its writer is gone (or died between creating it and writing its pid).
      try {
        unlinkSync(path);
      } catch {
        // another process took it over first; the next attempt sees its lock
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    return () => {
      try {
        if (holderOf(path) === process.pid) unlinkSync(path);
      } catch {
        // already gone
      }
    };
  }
  throw new UserError(
    `cannot take the lock ${path}: another gpuprep keeps taking it`,
    "run again in a moment",
  );
}
