/**
 * Writing generated files without losing anything. .gpuprep/manifest.json records a hash of every
 * file gpuprep wrote; a file that is new, unchanged or still exactly as gpuprep wrote it is
 * (re)written, anything else (the user edited it, or it was never ours) stops the write unless
 * --force, and then the old content is kept under .gpuprep/backups/<time>/. pyproject.toml edits
 * only append, so they go through with a backup.
 * Every path is checked and written through util/safe-write (no links, atomic rename) under the
 * project's lock (util/project-lock).
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { READ_LIMITS, readJsonFile, readTextFile } from "../util/safe-read.js";
import { checkProjectPath, writeProjectFile } from "../util/safe-write.js";
import { acquireProjectLock } from "../util/project-lock.js";
import type { GeneratedFile } from "./types.js";

export type WriteStatus = "create" | "unchanged" | "update" | "edited" | "foreign" | "user-file";

export interface FilePlan {
  file: GeneratedFile;
  status: WriteStatus;
  before: string | null;
}

export interface Manifest {
  tool: "gpuprep";
  files: Record<string, string>;
}

const MANIFEST = ".gpuprep/manifest.json";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const DELETE_MANIFEST_HINT = "delete it; gpuprep then treats every existing file as yours";

function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!checkProjectPath(dir, MANIFEST)) return { tool: "gpuprep", files: {} };
  // Not JSON: said with its position only, never a byte of the file (it may be a planted link).
  const parsed = readJsonFile(path, { maxBytes: READ_LIMITS.manifest, hint: DELETE_MANIFEST_HINT });
  const files = (parsed as { files?: unknown } | null)?.files;
  if (typeof files !== "object" || files === null || Array.isArray(files))
    return { tool: "gpuprep", files: {} };
  const hashes: Record<string, string> = {};
  for (const [name, hash] of Object.entries(files)) if (typeof hash === "string") hashes[name] = hash;
  return { tool: "gpuprep", files: hashes };
}

/** The current content of a project file, or null when there is none (links and FIFOs refused). */
function currentContent(dir: string, relPath: string): string | null {
  if (!checkProjectPath(dir, relPath)) return null;
  return readTextFile(join(dir, relPath), {
    maxBytes: READ_LIMITS.manifest,
    hint: `gpuprep would replace ${relPath}; move it away if it is not the project's file`,
  });
}

/** What writing would do to each file; reads only. */
export function planWrites(dir: string, files: GeneratedFile[]): FilePlan[] {
  const manifest = readManifest(dir);
  return files.map((file) => {
    const before = currentContent(dir, file.path);
    if (before === null) return { file, status: "create", before: null };
    if (before === file.content) return { file, status: "unchanged", before };
    if (file.kind === "user-file") return { file, status: "user-file", before };
    const recorded = manifest.files[file.path];
    if (recorded === undefined) return { file, status: "foreign", before };
    return { file, status: recorded === sha256(before) ? "update" : "edited", before };
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
  const release = acquireProjectLock(dir);
  try {
    return writeLocked(dir, plans, now);
  } finally {
    release();
  }
}

function writeLocked(dir: string, plans: FilePlan[], now: Date): string | null {
  // Another writer may have run between planning and taking the lock: what was planned must still hold.
  for (const plan of plans) {
    if (currentContent(dir, plan.file.path) !== plan.before)
      throw new UserError(
        `${plan.file.path} changed while init was planning`,
        "run init again; nothing was written",
      );
  }
  const backupRel = join(".gpuprep", "backups", now.toISOString().replace(/[:.]/g, "-"));
  let backedUp = false;
  const manifest = readManifest(dir);
  for (const plan of plans) {
    if (plan.status === "unchanged") {
      if (plan.file.kind === "generated") manifest.files[plan.file.path] = sha256(plan.file.content);
      continue;
    }
    if (plan.before !== null && plan.status !== "update") {
      writeProjectFile(dir, join(backupRel, plan.file.path), plan.before);
      backedUp = true;
    }
    writeProjectFile(dir, plan.file.path, plan.file.content, plan.file.executable ? { mode: 0o755 } : {});
    if (plan.file.kind === "generated") manifest.files[plan.file.path] = sha256(plan.file.content);
  }
  writeProjectFile(dir, MANIFEST, JSON.stringify(manifest, null, 2) + "\n");
  return backedUp ? join(dir, backupRel) : null;
}
