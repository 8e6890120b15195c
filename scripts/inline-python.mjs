// The build's inlining of one Python file into another (see copy-assets.mjs), kept apart so the
// test that checks the inlined copies can name the marker it looks for.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** `NAME = None  # @inline PATH`: PATH is relative to the file holding the line. */
export const INLINE_MARKER = /^(\w+) = None {2}# @inline (\S+)$/gm;

/** The text of the Python file at `path` with each marker line replaced by its file's text. */
export function inlinePython(path) {
  return readFileSync(path, "utf8").replace(INLINE_MARKER, (_line, name, relative) => {
    const text = readFileSync(join(dirname(path), relative), "utf8");
    // A raw triple-quoted literal keeps the text byte for byte, backslashes included, unless the
    // text holds its closing quotes or ends in a backslash; refuse those rather than corrupt them.
    if (text.includes("'''") || text.endsWith("\\"))
      throw new Error(`${relative} cannot be inlined into ${path}: it holds ''' or ends with a backslash`);
    return `${name} = r'''${text}'''  # @inline ${relative}`;
  });
}
