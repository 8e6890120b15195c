/**
 * Slurm's hostlist notation, both ways: `gpu[01-04,07]` <-> gpu01 gpu02 gpu03 gpu04 gpu07. Fleet
 * reports fold their node lists with it (an admin reads `gpu[001-128]`, not 128 names), and
 * `--hosts` expands it without Slurm. Same rules as Slurm's hostlist.c for what matters here: the
 * last run of digits in a name is its index, zero padding is kept (gpu01 and gpu1 are different
 * hosts), and a bracket may hold ranges and single numbers separated by commas.
 */
import { UserError } from "../errors.js";
import { compareNodeNames } from "./order.js";

interface Indexed {
  prefix: string;
  suffix: string;
  /** The digits as written; "" when the name has none. */
  digits: string;
}

function split(name: string): Indexed {
  const match = /^(.*?)(\d+)(\D*)$/.exec(name);
  if (!match) return { prefix: name, suffix: "", digits: "" };
  return { prefix: match[1] ?? "", digits: match[2] ?? "", suffix: match[3] ?? "" };
}

/** Padded numbers ("007") keep their width; unpadded ones ("7", "12") fold together. */
function widthClass(digits: string): number {
  return digits.length > 1 && digits.startsWith("0") ? digits.length : 0;
}

function rangesOf(numbers: number[], width: number): string[] {
  const sorted = [...new Set(numbers)].sort((a, b) => a - b);
  const pad = (n: number) => String(n).padStart(width, "0");
  const ranges: string[] = [];
  let start = sorted[0];
  let previous = start;
  for (const n of [...sorted.slice(1), Number.NaN]) {
    if (start === undefined || previous === undefined) break;
    if (n === previous + 1) {
      previous = n;
      continue;
    }
    ranges.push(start === previous ? pad(start) : `${pad(start)}-${pad(previous)}`);
    start = n;
    previous = n;
  }
  return ranges;
}

/**
 * Node names folded into hostlist items, in name order: ["gpu[01-04,07]", "login1"]. A name
 * that shares its prefix, suffix and padding with no other stays as it is.
 */
/** The last folds, by their names: one report folds the same long lists several times. */
const folded = new Map<string, string[]>();

function foldHostItems(names: readonly string[]): string[] {
  const key = names.join("\n");
  const known = folded.get(key);
  if (known) return known;
  const items = foldUncached(names);
  if (folded.size >= 64) folded.delete(folded.keys().next().value ?? "");
  folded.set(key, items);
  return items;
}

function foldUncached(names: readonly string[]): string[] {
  const groups = new Map<
    string,
    { first: string; prefix: string; suffix: string; width: number; numbers: number[] }
  >();
  const plain: string[] = [];
  const indexed: Array<Indexed & { name: string }> = [];
  for (const name of [...new Set(names)].sort(compareNodeNames)) {
    const parts = split(name);
    // Only plain host names fold: "gpu01 (gpu09.json)" (two snapshots of one host) stays as it is.
    if (parts.digits === "" || !/^[A-Za-z0-9_.@%+-]+$/.test(name)) plain.push(name);
    else indexed.push({ ...parts, name });
  }
  // "gpu10" joins "gpu01".."gpu09": padding to two digits leaves it as it is.
  const paddedWidths = new Set(
    indexed
      .filter((n) => widthClass(n.digits) > 0)
      .map((n) => `${n.prefix}\u0000${n.suffix}\u0000${n.digits.length}`),
  );
  for (const { prefix, suffix, digits, name } of indexed) {
    const padded = paddedWidths.has(`${prefix}\u0000${suffix}\u0000${digits.length}`);
    const width = padded ? digits.length : 0;
    const key = `${prefix}\u0000${suffix}\u0000${width}`;
    const group = groups.get(key);
    if (group) group.numbers.push(Number(digits));
    else groups.set(key, { first: name, prefix, suffix, width, numbers: [Number(digits)] });
  }
  const items: Array<{ sortKey: string; text: string }> = plain.map((name) => ({
    sortKey: name,
    text: name,
  }));
  for (const group of groups.values()) {
    const ranges = rangesOf(group.numbers, group.width);
    const single = ranges.length === 1 && !ranges[0]?.includes("-");
    items.push({
      sortKey: group.first,
      text: single
        ? `${group.prefix}${ranges[0] ?? ""}${group.suffix}`
        : `${group.prefix}[${ranges.join(",")}]${group.suffix}`,
    });
  }
  return items.sort((a, b) => compareNodeNames(a.sortKey, b.sortKey)).map((i) => i.text);
}

/** Top-level commas only: "a[1,3],b" -> ["a[1,3]", "b"]. */
function topLevelItems(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "[") depth++;
    if (char === "]") depth--;
    if (depth < 0 || depth > 1) throw new Error("unbalanced brackets");
    if (char === "," && depth === 0) {
      items.push(current);
      current = "";
    } else current += char;
  }
  if (depth !== 0) throw new Error("unbalanced brackets");
  items.push(current);
  return items.map((i) => i.trim()).filter((i) => i !== "");
}

function expandBracket(body: string, limit: number): string[] {
  const out: string[] = [];
  for (const part of body.split(",")) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!range) throw new Error(`"${part}" is not a number or a range`);
    const [from = "", to = from] = [range[1], range[2] ?? range[1]];
    const width = from.length > 1 && from.startsWith("0") ? from.length : 0;
    const [a, b] = [Number(from), Number(to)];
    if (b < a) throw new Error(`range ${part} runs backwards`);
    if (out.length + (b - a + 1) > limit) throw new Error(`more than ${limit} hosts`);
    for (let n = a; n <= b; n++) out.push(String(n).padStart(width, "0"));
  }
  return out;
}

/** One item, any number of brackets: "rack[1-2]-gpu[01-02]" -> 4 names. */
function expandItem(item: string, limit: number): string[] {
  const open = item.indexOf("[");
  if (open < 0) return [item];
  const close = item.indexOf("]", open);
  const head = item.slice(0, open);
  const rest = expandItem(item.slice(close + 1), limit);
  const names: string[] = [];
  for (const number of expandBracket(item.slice(open + 1, close), limit)) {
    for (const tail of rest) {
      names.push(`${head}${number}${tail}`);
      if (names.length > limit) throw new Error(`more than ${limit} hosts`);
    }
  }
  return names;
}

/**
 * "gpu[01-03],login1" -> gpu01 gpu02 gpu03 login1 (duplicates dropped, order kept). Throws a
 * one-line UserError naming `flag` for a malformed list.
 */
export function expandHostlist(text: string, flag: string, limit = 100_000): string[] {
  try {
    const names = topLevelItems(text).flatMap((item) => expandItem(item, limit));
    if (names.length === 0) throw new Error("no host in it");
    for (const name of names)
      if (!/^[A-Za-z0-9_.@:%+-]+$/.test(name)) throw new Error(`"${name}" is not a host name`);
    return [...new Set(names)];
  } catch (error) {
    throw new UserError(
      `${flag} ${JSON.stringify(text)}: ${(error as Error).message}`,
      "a hostlist such as gpu[01-16] or gpu[01-04,07],login1",
    );
  }
}

/** An item with more than `max` ranges in its brackets keeps its first ones and an ellipsis. */
function shortenItem(item: string, max: number): { text: string; cut: boolean } {
  const open = item.indexOf("[");
  if (open < 0) return { text: item, cut: false };
  const close = item.indexOf("]", open);
  const ranges = item.slice(open + 1, close).split(",");
  if (ranges.length <= max) return { text: item, cut: false };
  return {
    text: `${item.slice(0, open + 1)}${ranges.slice(0, max).join(",")},…${item.slice(close)}`,
    cut: true,
  };
}

/**
 * A node list for a sentence: folded ("gpu[01-12,20-24]"), at most `maxItems` hostlist items and
 * as many ranges in each, with the count of the nodes when anything was left out.
 */
export function nodeListText(nodes: readonly string[], maxItems = 6): string {
  const items = foldHostItems(nodes);
  const shown = items.slice(0, maxItems).map((item) => shortenItem(item, maxItems));
  const cut = items.length > maxItems || shown.some((s) => s.cut);
  const text = shown.map((s) => s.text).join(", ");
  return cut ? `${text}${items.length > maxItems ? ", …" : ""} (${new Set(nodes).size} nodes)` : text;
}
