/**
 * Whether the user's knowledge-base overlay is merged in, and which one was: state without
 * imports, so the CLI can set `--no-overlay` and reports can record the overlay without loading
 * the knowledge base (its schemas cost start-up that `doctor` would rather spend on the probe).
 */

/** The overlay (`gpuprep kb update`) merged into this process's knowledge base. */
export interface OverlayInUse {
  path: string;
  fetchedAt: string;
  indexUrl: string;
  /** Torch build rows it holds (known builds gain Pythons, unknown ones are added). */
  torchBuilds: number;
}

let off = false;
let inUse: OverlayInUse | null = null;
let generation = 0;

/**
 * --no-overlay: the packaged tables alone, so a `--from` replay says what this release says,
 * whatever `kb update` fetched on this machine.
 */
export function disableKnowledgeBaseOverlay(): void {
  off = true;
  inUse = null;
  generation++;
}

export function overlayDisabled(): boolean {
  return off;
}

/** Changes whenever the switch does, so a knowledge base loaded before it is loaded again. */
export function overlayGeneration(): number {
  return generation;
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
