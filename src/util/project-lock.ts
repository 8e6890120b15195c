/**
 * One writer per project: `.gpuprep/lock` is put in place whole (link(2) of a temporary file
 * holding the writer's pid, which fails where a lock exists). A second gpuprep finds it and stops
 * with a clear line; a lock whose pid no longer runs (a SIGKILLed init) is stale and taken over,
 * and so is an unreadable or empty one older than a few seconds (an older gpuprep's, or a
 * hand-made one). Pids are only meaningful on one
 * host, which is where two inits of one checkout race. The lock lives in the held `.gpuprep`
 * directory of util/safe-write, like every other file init writes.
 */
import { linkSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { readTextFile } from "./safe-read.js";
import { type HeldDirectory, ProjectTree, writeFailure } from "./safe-write.js";

const LOCK_PATH = ".gpuprep/lock";

/** Whether `pid` is a live process (EPERM: it runs, as another user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

function holderOf(dir: HeldDirectory): number | null {
  try {
    const text = readTextFile(dir.at("lock"), { maxBytes: 64, hint: "", noFollow: true });
    const pid = Number.parseInt(text.trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** An empty lock younger than a few seconds belongs to a writer that has not written its pid yet. */
function justCreated(dir: HeldDirectory): boolean {
  const stats = dir.entry("lock");
  return stats !== null && Date.now() - stats.mtimeMs < 5_000;
}

/**
 * Creates the lock with this pid already in it, or returns false when one is there already: the
 * pid goes into a temporary file first, which link(2) then puts in place, failing with EEXIST
 * where a lock exists. A writer killed at any moment leaves either no lock or one naming it, never
 * an empty one a next run would have to wait out (its temporary file is swept like any other).
 */
function createLock(dir: HeldDirectory, shown: string): boolean {
  let temp: string;
  try {
    temp = dir.stage("lock", `${process.pid}\n`, 0o644);
  } catch (error) {
    throw writeFailure(shown, error, "check the project's permissions");
  }
  try {
    linkSync(dir.at(temp), dir.at("lock"));
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") return false;
    throw writeFailure(shown, error, "check the project's permissions");
  } finally {
    dir.remove(temp);
  }
}

/** Takes the project's lock in `tree`, or throws a UserError naming the pid that holds it. Returns the release. */
export function lockProject(tree: ProjectTree): () => void {
  const dir = tree.directory(".gpuprep", true)!;
  const shown = join(tree.root, LOCK_PATH);
  for (let attempt = 0; attempt < 2; attempt++) {
    tree.isFile(LOCK_PATH);
    if (createLock(dir, shown)) {
      return () => {
        if (holderOf(dir) === process.pid) dir.remove("lock");
      };
    }
    const holder = holderOf(dir);
    if (holder !== null ? isRunning(holder) : justCreated(dir)) {
      throw new UserError(
        `another gpuprep (pid ${holder}) is writing this project (${shown})`,
        "wait for it to finish; if no gpuprep runs, delete the lock file",
      );
    }
    // Stale: its writer is gone (or died between creating it and writing its pid). Another
    // process may take it over first; the next attempt then sees its lock.
    dir.remove("lock");
  }
  throw new UserError(
    `cannot take the lock ${shown}: another gpuprep keeps taking it`,
    "run again in a moment",
  );
}

/** Takes the project's lock, or throws a UserError naming the pid that holds it. Returns the release. */
export function acquireProjectLock(root: string): () => void {
  const tree = new ProjectTree(root);
  try {
    const release = lockProject(tree);
    return () => {
      release();
      tree.close();
    };
  } catch (error) {
    tree.close();
    throw error;
  }
}
