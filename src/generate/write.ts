/**
 * Writing generated files without losing anything. .gpuprep/manifest.json records a hash of every
 * file gpuprep wrote; a file that is new, unchanged or still exactly as gpuprep wrote it is
 * (re)written, anything else (the user edited it, or it was never ours) stops the write unless
 * --force, and then the old content is kept under .gpuprep/backups/<time>/. pyproject.toml edits
 * only append, so they go through with a backup.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { UserError, errorMessage } from "../errors.js";
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

function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) return { tool: "gpuprep", files: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Manifest;
    return { tool: "gpuprep", files: parsed.files ?? {} };
  } catch (error) {
    throw new UserError(
      `${path} is not valid JSON: ${errorMessage(error)}`,
      "delete it; gpuprep then treats every existing file as yours",
    );
  }
}

/** What writing would do to each file; reads only. */
export function planWrites(dir: string, files: GeneratedFile[]): FilePlan[] {
  const manifest = readManifest(dir);
  return files.map((file) => {
    const path = join(dir, file.path);
    if (!existsSync(path)) return { file, status: "create", before: null };
    const before = readFileSync(path, "utf8");
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
  const backupDir = join(dir, ".gpuprep", "backups", now.toISOString().replace(/[:.]/g, "-"));
  let backedUp = false;
  const manifest = readManifest(dir);
  for (const plan of plans) {
    if (plan.status === "unchanged") {
      if (plan.file.kind === "generated") manifest.files[plan.file.path] = sha256(plan.file.content);
      continue;
    }
    const target = join(dir, plan.file.path);
    try {
      if (plan.before !== null && plan.status !== "update") {
        const backup = join(backupDir, plan.file.path);
        mkdirSync(dirname(backup), { recursive: true });
        writeFileSync(backup, plan.before);
        backedUp = true;
      }
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, plan.file.content);
      if (plan.file.executable) chmodSync(target, 0o755);
    } catch (error) {
      throw new UserError(
        `cannot write ${target}: ${errorMessage(error)}`,
        "check the project directory's permissions",
      );
    }
    if (plan.file.kind === "generated") manifest.files[plan.file.path] = sha256(plan.file.content);
  }
  mkdirSync(join(dir, ".gpuprep"), { recursive: true });
  writeFileSync(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
  return backedUp ? backupDir : null;
}
