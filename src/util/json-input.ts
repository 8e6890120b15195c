/* eslint-disable no-control-regex -- this file is about control characters and escape sequences */
/**
 * JSON a user hands us (--from snapshots, saved validate reports). Its errors are one line that
 * never echoes the input: V8's messages quote a piece of the text, newlines and escapes included.
 * Nesting is capped because rendering (JSON.stringify, zod) recurses and a document nested 100,000
 * deep overflows the stack.
 */
import { UserError, errorMessage } from "../errors.js";

/** Real snapshots nest about 8 deep; 256 leaves room for any free-form field. */
export const MAX_JSON_DEPTH = 256;

/** V8's reason without the quoted input, and where: "Unexpected token 'o' at line 2, column 1". */
export function describeJsonError(error: unknown, text: string): string {
  const message = errorMessage(error);
  const position = /at position (\d+)/.exec(message);
  // "Unexpected token 'o', ..."schema":\nnonsense"... is not valid JSON" -> "Unexpected token 'o'"
  let reason = message.split(/,\s*(?:\.\.\.)?"|\s+in JSON at position|\s+at position/)[0] ?? message;
  // What is left quotes at most one character of the input ("Unexpected token 'o'").
  reason =
    reason
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")
      .replace(/\s+/g, " ")
      .trim() || "syntax error";
  if (!position) return reason;
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${reason} at line ${line}, column ${column}`;
}

/** The deepest nesting of arrays and objects in `value`, counted without recursion, stopping past `limit`. */
export function nestingDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export function parseJsonInput(text: string, origin: string, hint: string): unknown {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${origin} is not valid JSON (${describeJsonError(error, text)})`, hint);
  }
  if (nestingDepth(data) > MAX_JSON_DEPTH) {
    throw new UserError(`${origin} nests arrays or objects more than ${MAX_JSON_DEPTH} deep`, hint);
  }
  return data;
}
