/**
 * JSON a user hands us (--from snapshots, saved validate reports). Its errors are one line that
 * never echoes the input: V8's messages quote a piece of the text, newlines and escapes included.
 * Nesting is capped because rendering (JSON.stringify, zod) recurses and a document nested 100,000
 * deep overflows the stack.
 */
import { UserError, errorMessage } from "../errors.js";

/** Real snapshots nest about 8 deep; 256 leaves room for any free-form field. */
const MAX_JSON_DEPTH = 256;

/**
 * V8's reason without any of the input, and where: "unexpected character at line 2, column 1".
 * V8 quotes the text ("Unexpected token 'r', \"root:x:0:0\"... is not valid JSON"), and even the
 * one character of "Unexpected token 'r'" is a byte of a file that may be a linked secret, so
 * the reason is one of V8's fixed phrases or "syntax error", never a piece of the message.
 */
export function describeJsonError(error: unknown, text: string): string {
  const message = errorMessage(error);
  const position = /at position (\d+)/.exec(message);
  const reason = JSON_REASONS.find(([pattern]) => pattern.test(message))?.[1] ?? "syntax error";
  if (!position) return reason;
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${reason} at line ${line}, column ${column}`;
}

/** V8's JSON.parse messages (Node 20-24), each as a phrase of our own. */
const JSON_REASONS: [RegExp, string][] = [
  [/^Unexpected end of JSON input/, "the text ends too early"],
  [/^Unexpected token/, "unexpected character"],
  [/^Unexpected non-whitespace character after JSON/, "more text after the JSON value"],
  [/^Bad control character in string literal/, "a control character inside a string"],
  [/^Bad escaped character/, "a bad escape inside a string"],
  [/^Bad Unicode escape/, "a bad \\u escape inside a string"],
  [/^Unterminated string/, "a string that never ends"],
  [/^Expected property name/, "a property name expected"],
  [/^Expected ',' or '}'/, "',' or '}' expected"],
  [/^Expected ',' or ']'/, "',' or ']' expected"],
  [/^Expected ':'/, "':' expected"],
  [/^Expected double-quoted property name/, "a double-quoted property name expected"],
  [
    /^(?:No number after minus sign|Exponent part is missing a number|Unterminated fractional number)/,
    "a broken number",
  ],
];

/** The deepest nesting of arrays and objects in `value`, counted without recursion, stopping past `limit`. */
function nestingDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
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
