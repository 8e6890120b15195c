/**
 * Writing generated files without losing anything. .gpuprep/manifest.json records a hash of every
 * file gpuprep wrote; a file that is new, unchanged or still exactly as gpuprep wrote it is
 * (re)written, anything else (the user edited it, or it was never ours) stops the write unless
 * --force, and then the old content is kept under .gpuprep/backups/<time>/. pyproject.toml edits
 * only append, so they go through with a backup.
 *
 * The files and the manifest are committed together (issue 28): each is staged as a temporary
 * file beside its target (util/safe-write: held directories, no links, fsynced), then a journal
 * naming every rename is written atomically, then the renames run, then the journal goes. An
 * init interrupted before the journal leaves the old set (its temporary files are removed by the
 * next run); one interrupted after it is finished by the next run: the old set or the new one,
 * never files without their manifest. Everything runs under the project's lock (util/project-lock).
 */
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { UserError } from "../errors.js";
import { READ_LIMITS, readJsonFile, readTextFile } from "../util/safe-read.js";
import {
  type HeldDirectory,
  ProjectTree,
  TEMP_FILE,
  withProjectTree,
  writeFailure,
} from "../util/safe-write.js";
import { isRunning, lockProject } from "../util/project-lock.js";
import type { GeneratedFile } from "./types.js";

export type WriteStatus = "create" | "unchanged" | "update" | "edited" | "foreign" | "user-file";

export interface FilePlan {
  file: GeneratedFile;
  status: WriteStatus;
  before: string | null;
}

interface Manifest {
  tool: "gpuprep";
  files: Record<string, string>;
}

const MANIFEST = ".gpuprep/manifest.json";
const JOURNAL = ".gpuprep/journal.json";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const DELETE_MANIFEST_HINT = "delete it; gpuprep then treats every existing file as yours";

/** A JSON file of gpuprep's own inside the project, read through the held directories. */
function readOwnJson(tree: ProjectTree, relPath: string, hint: string): unknown {
  return readJsonFile(tree.pathOf(relPath)!, {
    maxBytes: READ_LIMITS.manifest,
    hint,
    noFollow: true,
    shownAs: join(tree.root, relPath),
  });
}

function readManifest(tree: ProjectTree): Manifest {
  if (!tree.isFile(MANIFEST)) return { tool: "gpuprep", files: {} };
  // Not JSON: said with its position only, never a byte of the file (it may be a planted link).
  const parsed = readOwnJson(tree, MANIFEST, DELETE_MANIFEST_HINT);
  const files = (parsed as { files?: unknown } | null)?.files;
  if (typeof files !== "object" || files === null || Array.isArray(files))
    return { tool: "gpuprep", files: {} };
  const hashes: Record<string, string> = {};
  for (const [name, hash] of Object.entries(files)) if (typeof hash === "string") hashes[name] = hash;
  return { tool: "gpuprep", files: hashes };
}

/** The current content of a project file, or null when there is none (links and FIFOs refused). */
function currentContent(tree: ProjectTree, relPath: string): string | null {
  if (!tree.isFile(relPath)) return null;
  return readTextFile(tree.pathOf(relPath)!, {
    maxBytes: READ_LIMITS.manifest,
    hint: `gpuprep would replace ${relPath}; move it away if it is not the project's file`,
    noFollow: true,
    shownAs: join(tree.root, relPath),
  });
}

/** What writing would do to each file; reads only. */
export function planWrites(dir: string, files: GeneratedFile[]): FilePlan[] {
  return withProjectTree(dir, (tree) => {
    const manifest = readManifest(tree);
    return files.map((file) => {
      const before = currentContent(tree, file.path);
      if (before === null) return { file, status: "create", before: null };
      if (before === file.content) return { file, status: "unchanged", before };
      if (file.kind === "user-file") return { file, status: "user-file", before };
      const recorded = manifest.files[file.path];
      if (recorded === undefined) return { file, status: "foreign", before };
      return { file, status: recorded === sha256(before) ? "update" : "edited", before };
    });
  });
}

export function blocked(plans: FilePlan[]): FilePlan[] {
  return plans.filter((p) => p.status === "edited" || p.status === "foreign");
}

/**
 * Writes the files. Without force, refuses (before writing anything) when a file was edited or is
 * not gpuprep's; with force, backs those up first. Returns the backup directory, if one was made.
 */
export function applyWrites(dir: string, plans: FilePlan[], force: boolean, now = new Date()): string | null {
  const stopped = blocked(plans);
  if (stopped.length > 0 && !force) {
    const names = stopped.map(
      (p) =>
        `${p.file.path} (${p.status === "edited" ? "edited since gpuprep wrote it" : "not written by gpuprep"})`,
    );
    throw new UserError(
      `init would overwrite ${names.join(", ")}`,
      "see the changes with --dry-run; --force replaces them and keeps a backup under .gpuprep/backups/",
    );
  }
  return withProjectTree(dir, (tree) => {
    const release = lockProject(tree);
    try {
      finishInterrupted(
        tree,
        plans.map((p) => p.file.path),
      );
      return writeLocked(tree, plans, now);
    } finally {
      release();
    }
  });
}

/**
 * Finishes what an interrupted init left, under the lock: renames a committed journal still
 * names, and removes temporary files of writers that no longer run. Returns whether anything
 * was there. `--dry-run` never calls it (it writes nothing).
 */
export function finishInterruptedInit(dir: string): boolean {
  return withProjectTree(dir, (tree) => {
    if (tree.directory(".gpuprep", false) === null) return false;
    const release = lockProject(tree);
    try {
      return finishInterrupted(tree, []);
    } finally {
      release();
    }
  });
}

interface Staged {
  path: string;
  dir: HeldDirectory;
  temp: string;
  name: string;
}

function writeLocked(tree: ProjectTree, plans: FilePlan[], now: Date): string | null {
  // Another writer may have run between planning and taking the lock: what was planned must still hold.
  for (const plan of plans) {
    if (currentContent(tree, plan.file.path) !== plan.before)
      throw new UserError(
        `${plan.file.path} changed while init was planning`,
        "run init again; nothing was written",
      );
  }
  const backupRel = join(".gpuprep", "backups", now.toISOString().replace(/[:.]/g, "-"));
  let backedUp = false;
  const manifest = readManifest(tree);
  const changes: { path: string; content: string; mode?: number }[] = [];
  for (const plan of plans) {
    if (plan.file.kind === "generated") manifest.files[plan.file.path] = sha256(plan.file.content);
    if (plan.status === "unchanged") continue;
    if (plan.before !== null && plan.status !== "update") {
      // Backups are new files in a new directory: written first, they change nothing of the set.
      tree.write(join(backupRel, plan.file.path), plan.before);
      backedUp = true;
    }
    changes.push({
      path: plan.file.path,
      content: plan.file.content,
      ...(plan.file.executable ? { mode: 0o755 } : {}),
    });
  }
  changes.push({ path: MANIFEST, content: JSON.stringify(manifest, null, 2) + "\n" });
  commitTogether(tree, changes);
  return backedUp ? join(tree.root, backupRel) : null;
}

/** Stages every change, writes the journal, renames, removes the journal (see the file's comment). */
function commitTogether(
  tree: ProjectTree,
  changes: { path: string; content: string; mode?: number }[],
): void {
  const staged: Staged[] = [];
  try {
    for (const change of changes)
      staged.push({ path: change.path, ...tree.stage(change.path, change.content, change.mode) });
    tree.write(
      JOURNAL,
      JSON.stringify({ tool: "gpuprep", renames: staged.map(({ path, temp }) => ({ path, temp })) }),
    );
  } catch (error) {
    // Nothing was renamed: the old set stands, and no temporary file or new directory is left.
    for (const entry of staged) entry.dir.remove(entry.temp);
    tree.removeMadeDirectories();
    throw error;
  }
  for (const entry of staged) {
    try {
      entry.dir.rename(entry.temp, entry.name);
    } catch (error) {
      // The journal stays: the next init finishes these renames.
      throw writeFailure(join(tree.root, entry.path), error, "run init again to finish the write");
    }
  }
  for (const dir of new Set(staged.map((entry) => entry.dir))) dir.sync();
  const gpuprep = tree.directory(".gpuprep", false)!;
  gpuprep.remove("journal.json");
  gpuprep.sync();
}

/** One journal entry, checked: a path inside the project and a temporary file name of ours. */
function journalEntry(item: unknown): { path: string; temp: string } | null {
  const { path, temp } = (item ?? {}) as { path?: unknown; temp?: unknown };
  if (typeof path !== "string" || typeof temp !== "string" || !TEMP_FILE.test(temp) || temp.includes("/"))
    return null;
  return { path, temp };
}

function finishInterrupted(tree: ProjectTree, plannedPaths: string[]): boolean {
  let found = false;
  if (tree.isFile(JOURNAL)) {
    found = true;
    const journal = readOwnJson(tree, JOURNAL, "delete it and run init again") as {
      renames?: unknown;
    } | null;
    const renames = Array.isArray(journal?.renames) ? journal.renames : [];
    for (const entry of renames.map(journalEntry)) {
      if (entry === null) continue;
      const { dir, name } = tree.locate(entry.path, false);
      if (dir?.entry(entry.temp)?.isFile()) dir.rename(entry.temp, name);
      dir?.sync();
    }
    tree.directory(".gpuprep", false)!.remove("journal.json");
  }
  return removeStaleTemps(tree, plannedPaths) || found;
}

/** Temporary files of writers that no longer run, in the directories init writes. */
function removeStaleTemps(tree: ProjectTree, plannedPaths: string[]): boolean {
  const dirs = new Set(["", ".gpuprep", ...plannedPaths.map((path) => dirname(path))]);
  for (const path of Object.keys(readManifest(tree).files)) dirs.add(dirname(path));
  let found = false;
  for (const relDir of dirs) {
    const dir = tree.directory(relDir === "." ? "" : relDir, false);
    for (const name of dir?.names() ?? []) {
      const pid = TEMP_FILE.exec(name)?.[1];
      if (pid === undefined || Number(pid) === process.pid || isRunning(Number(pid))) continue;
      dir!.remove(name);
      found = true;
    }
  }
  return found;
}
