/**
 * The user-level overlay that `gpuprep kb update` writes: torch builds seen on the PyTorch wheel
 * index, kept under the user's cache directory and never in the packaged data.
 */
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import { UserError } from "../errors.js";
import { READ_LIMITS, readJsonFile } from "../util/safe-read.js";
import { writeFileAtomic } from "../util/safe-write.js";
import { torchBuildRowSchema } from "./schema.js";
import type { TorchBuildRow } from "./types.js";

const overlaySchema = z.object({
  format: z.literal(1),
  fetchedAt: z.string(),
  indexUrl: z.string().url(),
  torchBuilds: z.array(torchBuildRowSchema),
});

export interface Overlay {
  format: 1;
  fetchedAt: string;
  indexUrl: string;
  torchBuilds: TorchBuildRow[];
}

/** $XDG_CACHE_HOME/gpuprep/kb-overlay.json, else ~/.cache/gpuprep/kb-overlay.json. */
export function defaultOverlayPath(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome =
    env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "gpuprep", "kb-overlay.json");
}

export function readOverlay(path: string = defaultOverlayPath()): Overlay | null {
  if (!existsSync(path)) return null;
  // util/safe-read: regular files only, capped, and an unparsable one is never quoted.
  const json = readJsonFile(path, {
    maxBytes: READ_LIMITS.kbOverlay,
    hint: `run \`gpuprep kb update\` again or delete ${path}`,
    origin: `the knowledge-base overlay ${path}`,
  });
  const parsed = overlaySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `the knowledge-base overlay ${path} does not match this gpuprep's format (${issue?.path.join(".") ?? ""}: ${issue?.message ?? ""})`,
      `run \`gpuprep kb update\` again or delete ${path}`,
    );
  }
  return parsed.data;
}

/** Write atomically (util/safe-write: an O_EXCL temp file, fsync, rename) so a crash never leaves half an overlay. */
export function writeOverlay(overlay: Overlay, path: string = defaultOverlayPath()): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, JSON.stringify(overlay, null, 2) + "\n");
}
