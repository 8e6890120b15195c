/**
 * An NGC PyTorch image tag as a value: "25.09" (the release, as the knowledge base keys its rows),
 * "25.09-py3", "25.09-py3-igpu" (the Jetson image), or a full reference ending in one
 * ("nvcr.io/nvidia/pytorch:25.09-py3"). Parsed once where it enters (a KB row, `kb ngc TAG`),
 * carried as this type, formatted only for people and references.
 */
export interface ImageTag {
  /** The release's two-digit year and month: 25.09 -> 25, 9. */
  readonly year: number;
  readonly month: number;
  /** The image's variant suffix: "py3" (amd64/arm64), "py3-igpu" (Jetson); null for the bare release. */
  readonly variant: "py3" | "py3-igpu" | null;
}

/** "25.09", "25.09-py3", "25.09-py3-igpu", or a reference ending ":25.09-py3"; null when it is not one. */
export function parseImageTag(text: string): ImageTag | null {
  const match = /(?:^|:)(\d{2})\.(\d{2})(?:-(py3(?:-igpu)?))?$/.exec(text.trim());
  if (!match) return null;
  const variant = match[3] === "py3" || match[3] === "py3-igpu" ? match[3] : null;
  return { year: Number(match[1]), month: Number(match[2]), variant };
}

/** The release "25.09": the key of the knowledge base's NGC rows, and how people name the release. */
export function imageRelease(tag: ImageTag): string {
  return `${String(tag.year).padStart(2, "0")}.${String(tag.month).padStart(2, "0")}`;
}

/** Order by release: 24.12 < 25.01 < 25.10; the variant does not order. */
export function compareImageTags(a: ImageTag, b: ImageTag): number {
  return a.year - b.year || a.month - b.month;
}
