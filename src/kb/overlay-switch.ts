/**
 * Whether the user's knowledge-base overlay is merged in, and which one was: state without
 * imports (but a type), so the CLI can set `--no-overlay` and reports can record the overlay without loading
 * the knowledge base (its schemas cost start-up that `doctor` would rather spend on the probe).
 */

import type { OverlayInUse } from "../json-envelope.js";

/** The overlay (`gpuprep kb update`) merged into this process's knowledge base; it is part of every JSON envelope. */
export type { OverlayInUse } from "../json-envelope.js";

let off = false;
let inUse: OverlayInUse | null = null;

/**
 * --no-overlay: the packaged tables alone, so a `--from` replay says what this release says,
 * whatever `kb update` fetched on this machine.
 */
export function disableKnowledgeBaseOverlay(): void {
  off = true;
  inUse = null;
}

export function overlayDisabled(): boolean {
  return off;
}

/** Set by the knowledge base's loader: what it merged (null: nothing). */
export function recordOverlay(overlay: OverlayInUse | null): void {
  inUse = overlay;
}

/**
 * The overlay the knowledge base was loaded with, for reports to record (an answer that depends
 * on it must say so); null when none was merged or the KB was not loaded.
 */
export function knowledgeBaseOverlay(): OverlayInUse | null {
  return inUse;
}
