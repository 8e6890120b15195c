/**
 * The one place a knowledge-base NGC release ("25.09"; schema.ts holds every row to that shape)
 * becomes an ImageTag, once per distinct text (kb/row-parser.ts), so the queries and the plan order
 * releases as values and never compare the text as a version.
 */
import { compareImageTags, parseImageTag, type ImageTag } from "../vocabulary/image-tag.js";
import { rowParser } from "./row-parser.js";

/** The release an NGC row names; throws on text the schema would have refused. */
const rowImageTag: (text: string) => ImageTag = rowParser(
  (text) => parseImageTag(text), // the edge test/vocabulary-edges.test.ts counts
  "an NGC release (kb/schema.ts admits only YY.MM)",
);

/** Newest release first, for sorting NGC rows (or anything carrying one) by their tag text. */
export function newestTagFirst(a: { tag: string }, b: { tag: string }): number {
  return compareImageTags(rowImageTag(b.tag), rowImageTag(a.tag));
}
