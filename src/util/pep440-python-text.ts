/**
 * The few pieces of Python's text semantics that `packaging` (the reference for PEP 440 and
 * PEP 508) leans on without saying so, spelled out for JavaScript, whose regex and string
 * functions differ on exactly these points:
 *
 * - `\s` and `str.strip()` are Python's `str.isspace()` set (29 characters), not JavaScript's
 *   (which adds U+FEFF and lacks U+001C-U+001F and U+0085).
 * - `re.IGNORECASE` on a str pattern also folds U+0130/U+0131 to i, U+017F to s and U+212A to k;
 *   JavaScript's `i` flag does not (so "1.0+\u212a" is a valid version to packaging).
 * - `\b` looks at Unicode word characters (`str.isalnum()` or `_`); JavaScript's is ASCII-only.
 * - `<` on str compares code points; JavaScript's compares UTF-16 code units.
 *
 * The sets were read from CPython 3.11 (Debian's /usr/bin/python3, the interpreter CI runs the
 * differential test with): `[c for c in range(0x110000) if chr(c).isspace()]` and
 * `[c for c in range(0x110000) if re.match('[a-z]', chr(c), re.I) and not re.match('[a-zA-Z]', chr(c))]`.
 */

/** Python's whitespace (`str.isspace()`, also what `\s` matches in a str pattern), as a class body. */
export const PY_SPACE =
  "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/** `\s` of a Python str pattern. */
export const S = `[${PY_SPACE}]`;

const LEADING_SPACE = new RegExp(`^${S}+`);
const TRAILING_SPACE = new RegExp(`${S}+$`);

/** `text.strip()` with no argument. */
export function pyStrip(text: string): string {
  return text.replace(LEADING_SPACE, "").replace(TRAILING_SPACE, "");
}

/** Non-ASCII characters that Python's IGNORECASE matches to an ASCII letter. */
const EXTRA_FOLDS: Record<string, string> = { i: "\u0130\u0131", k: "\u212a", s: "\u017f" };

/** A regex fragment matching `word` as Python's `re.IGNORECASE` would ("post" -> [pP][oO][sSſ][tT]). */
export function ignoreCase(word: string): string {
  let out = "";
  for (const char of word) {
    const lower = char.toLowerCase();
    if (lower < "a" || lower > "z") out += char;
    else out += `[${lower}${lower.toUpperCase()}${EXTRA_FOLDS[lower] ?? ""}]`;
  }
  return out;
}

/** `[a-z0-9]` under Python's IGNORECASE, as a class body. */
export const ALNUM_IGNORECASE = "a-zA-Z0-9\\u0130\\u0131\\u017f\\u212a";

/** A word character of a Python str pattern (`\w`): a letter, a number or `_`. Needs the `u` flag. */
export const PY_WORD = "[\\p{L}\\p{N}_]";

/** Python's `a < b` on str: by code point (differs from JavaScript's `<` only past U+FFFF). */
export function comparePyStrings(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(j) as number;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** PEP 503's normalised name (`packaging.utils.canonicalize_name`): runs of -_. become -, lower case. */
export function canonicalizeName(name: string): string {
  return name.replace(/[-_.]+/g, "-").toLowerCase();
}
