/**
 * Long prose made readable: a reason of 2,000 characters on one line (a decision that lists every
 * image it passed over) is split at its clauses and wrapped, and a long parenthesised list in it is
 * taken out as details, which text output shows with -v and files show as a sub-list.
 */

/** Where prose is wrapped: well under the 300 characters a line may have, and readable in a terminal. */
const WRAP_WIDTH = 100;
/** A parenthesised part longer than this is a list of details, not part of the sentence. */
const DETAIL_MIN = 160;

interface Prose {
  /** The text without its long parenthesised lists, each replaced by "(…)". */
  text: string;
  /** The items of those lists (split at their "; "), in order. */
  details: string[];
}

/** The top-level parts of `text` split at `separator`, never inside parentheses or brackets. */
function splitOutside(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[") depth++;
    else if ((c === ")" || c === "]") && depth > 0) depth--;
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
      i = start - 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** What starts an item of a labelled list: "26.08: ...", "3.13: ..." (a label, a colon, a space). */
const ITEM_LABEL = /^[^\s:;,()]{1,40}: /;

/**
 * The items of a parenthesised list, split at its "; ". Where the items are labelled ("26.09: ...;
 * 26.08: ...; driver 580 ..."), an item's own "; " does not start a new one: only a label does.
 */
function detailItems(inner: string): string[] {
  const parts = splitOutside(inner, "; ")
    .map((part) => part.trim())
    .filter(Boolean);
  if (!ITEM_LABEL.test(parts[0] ?? "")) return parts;
  const items: string[] = [];
  for (const part of parts)
    if (items.length === 0 || ITEM_LABEL.test(part)) items.push(part);
    else items[items.length - 1] += `; ${part}`;
  return items;
}

/** Takes the long parenthesised lists out of `text` (see Prose). */
export function separateDetails(text: string): Prose {
  const details: string[] = [];
  let out = "";
  let depth = 0;
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(") {
      if (depth === 0) open = i;
      depth++;
    } else if (c === ")" && depth > 0) {
      depth--;
      if (depth === 0) {
        const inner = text.slice(open + 1, i);
        if (inner.length >= DETAIL_MIN) {
          details.push(...detailItems(inner));
          out += "(…)";
        } else out += `(${inner})`;
      }
      continue;
    }
    if (depth === 0) out += c;
  }
  if (depth > 0) out += text.slice(open); // unbalanced: kept as it is
  return { text: out, details };
}

/**
 * Words into lines of at most `width` characters (a longer word stands alone). The spaces between
 * words on one line are kept as they were: "torch==2.5.1  ->  torch==2.7.*" keeps its arrows apart.
 */
function wrapWords(text: string, width = WRAP_WIDTH): string[] {
  const lines: string[] = [];
  let line = "";
  for (const [, gap, word] of text.trim().matchAll(/(\s*)(\S+)/g)) {
    const space = /\n/.test(gap!) ? " " : gap!;
    if (line && line.length + space.length + word!.length > width) {
      lines.push(line);
      line = word!;
    } else line = line ? `${line}${space}${word}` : word!;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * `text` as lines of at most `width`: each clause (split at "; " and at sentence ends, outside
 * parentheses) starts a line unless it fits after the previous one; a clause longer than a line is
 * wrapped at words.
 */
export function wrapProse(text: string, width = WRAP_WIDTH): string[] {
  const clauses = splitOutside(text, "; ").flatMap((clause, i, all) => {
    const sentences = splitOutside(clause, ". ");
    return sentences.map((s, j) => `${s}${j < sentences.length - 1 ? "." : i < all.length - 1 ? ";" : ""}`);
  });
  const lines: string[] = [];
  for (const clause of clauses.map((c) => c.trim()).filter(Boolean)) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + clause.length <= width)
      lines[lines.length - 1] = `${last} ${clause}`;
    else lines.push(...wrapWords(clause, width));
  }
  return lines;
}
