/**
 * JSON from a server or an archive, parsed within bounds: a size cap, and a nesting cap checked on
 * the text before JSON.parse sees it (V8 takes most of a second on 3 MB of nested brackets, and
 * no document these readers take nests deeper than a few levels).
 */
class JsonBoundsError extends Error {}

/** The deepest bracket nesting of a JSON text, strings skipped; stops counting past `limit`. */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** JSON.parse, refused past `maxChars` characters or `maxDepth` levels of nesting. */
export function parseBoundedJson(text: string, maxChars: number, maxDepth = 32): unknown {
  if (text.length > maxChars) throw new JsonBoundsError(`larger than ${maxChars} characters`);
  if (jsonDepth(text, maxDepth) > maxDepth)
    throw new JsonBoundsError(`nested deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonBoundsError("not JSON");
  }
}
