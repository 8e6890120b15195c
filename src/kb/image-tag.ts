/**
 * The knowledge base keys NGC images by their release text ("25.09"; schema.ts holds every row to
 * that shape). This is the one place that text becomes an ImageTag: once per distinct text, cached,
 * so the queries and the plan order releases as values and never compare the text as a version.
 */
import { compareImageTags, parseImageTag, type ImageTag } from "../vocabulary/image-tag.js";

const parsed = new Map<string, ImageTag>();

/** The release an NGC row names; throws on text the schema would have refused. */
function rowImageTag(text: string): ImageTag {
  const known = parsed.get(text);
  if (known) return known;
  const tag = parseImageTag(text);
  if (!tag)
    throw new Error(`knowledge base: "${text}" is not an NGC release (kb/schema.ts admits only YY.MM)`);
  parsed.set(text, tag);
  return tag;
}

/** Newest release first, for sorting NGC rows (or anything carrying one) by their tag text. */
export function newestTagFirst(a: { tag: string }, b: { tag: string }): number {
  return compareImageTags(rowImageTag(b.tag), rowImageTag(a.tag));
}
