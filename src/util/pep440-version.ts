/**
 * PEP 440 versions (https://packaging.python.org/en/latest/specifications/version-specifiers/),
 * parsed, normalised and ordered exactly as Python's `packaging.version.Version` does (23.0, the
 * version Debian ships and CI checks against: src/util/pep440-differential.test.ts). Anything
 * `Version()` refuses (packaging >= 22 raises InvalidVersion; there is no LegacyVersion) parses to
 * null here.
 *
 * Numbers are kept as their decimal digits, so ordering is exact for any length (Python's ints are
 * unbounded); the number-typed fields (`epoch`, `release`, ...) are for reading and lose precision
 * past 2^53.
 */
import { ALNUM_IGNORECASE, S, comparePyStrings, ignoreCase } from "./pep440-python-text.js";

/** A letter-and-number segment: `pre` ("a", "b", "rc"), `post` ("post"). */
interface Lettered {
  /** Lower-cased and folded as packaging does (alpha -> a, c/pre/preview -> rc, r/rev -> post). */
  letter: string;
  digits: string;
}

/** One dot-separated part of a local segment: a number, or lower-cased text. */
interface LocalPart {
  numeric: boolean;
  /** Digits without leading zeros when numeric. */
  text: string;
}

const SEP = "[-_.]";
const LETTERS = `[${ALNUM_IGNORECASE}]`;
// packaging's VERSION_PATTERN, with re.IGNORECASE spelled out letter by letter. The alternatives
// keep packaging's order: the first that lets the whole string match decides the groups.
const VERSION_RE = new RegExp(
  `^${S}*${ignoreCase("v")}?` +
    `(?:([0-9]+)!)?` +
    `([0-9]+(?:\\.[0-9]+)*)` +
    `(?:${SEP}?(${["a", "b", "c", "rc", "alpha", "beta", "pre", "preview"].map(ignoreCase).join("|")})${SEP}?([0-9]+)?)?` +
    `(?:-([0-9]+)|${SEP}?(${["post", "rev", "r"].map(ignoreCase).join("|")})${SEP}?([0-9]+)?)?` +
    `(?:${SEP}?(${ignoreCase("dev")})${SEP}?([0-9]+)?)?` +
    `(?:\\+(${LETTERS}+(?:${SEP}${LETTERS}+)*))?` +
    `${S}*$`,
);

const LETTER_ALIASES: Record<string, string> = {
  alpha: "a",
  beta: "b",
  c: "rc",
  pre: "rc",
  preview: "rc",
  rev: "post",
  r: "post",
};

/** Python's int(text) for ASCII digits, kept as text: "007" -> "7". */
function digitsOf(text: string): string {
  if (text.length === 1 || text[0] !== "0") return text;
  const stripped = text.replace(/^0+/, "");
  return stripped === "" ? "0" : stripped;
}

function compareDigits(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** packaging's _parse_letter_version: a letter with an implied 0, or `1.0-1`'s bare number as post. */
function letterVersion(letter: string | undefined, number: string | undefined): Lettered | null {
  if (letter !== undefined) {
    const lower = letter.toLowerCase();
    return { letter: LETTER_ALIASES[lower] ?? lower, digits: digitsOf(number ?? "0") };
  }
  return number !== undefined ? { letter: "post", digits: digitsOf(number) } : null;
}

function localParts(local: string | undefined): LocalPart[] | null {
  if (local === undefined) return null;
  return local
    .split(/[-_.]/)
    .map((part) =>
      /^[0-9]+$/.test(part)
        ? { numeric: true, text: digitsOf(part) }
        : { numeric: false, text: part.toLowerCase() },
    );
}

/** -1 / 0 / 1 for values where null stands for packaging's NegativeInfinity or Infinity. */
function compareOptional<T>(
  a: T | null,
  b: T | null,
  nullIs: -1 | 1,
  compare: (x: T, y: T) => number,
): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? nullIs : -nullIs;
  return compare(a, b);
}

function compareLettered(a: Lettered, b: Lettered): number {
  return comparePyStrings(a.letter, b.letter) || compareDigits(a.digits, b.digits);
}

/** Local segments: text parts sort below numeric ones; a shorter prefix sorts first. */
function compareLocal(a: readonly LocalPart[], b: readonly LocalPart[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as LocalPart;
    const y = b[i] as LocalPart;
    if (x.numeric !== y.numeric) return x.numeric ? 1 : -1;
    const c = x.numeric ? compareDigits(x.text, y.text) : comparePyStrings(x.text, y.text);
    if (c !== 0) return Math.sign(c);
  }
  return Math.sign(a.length - b.length);
}

function compareReleases(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareDigits(a[i] as string, b[i] as string);
    if (c !== 0) return c;
  }
  return Math.sign(a.length - b.length);
}

/** A parsed PEP 440 version. Build one with parsePep440Version. */
export class Pep440Version {
  /** The release without trailing zeros: what ordering compares (1.0 == 1.0.0). */
  private readonly releaseKey: readonly string[];
  private text: string | undefined;
  private publicVersion: Pep440Version | undefined;
  private baseVersionValue: Pep440Version | undefined;

  private constructor(
    private readonly epochDigits: string,
    private readonly releaseDigits: readonly string[],
    private readonly preSegment: Lettered | null,
    private readonly postSegment: Lettered | null,
    private readonly devDigits: string | null,
    private readonly localSegment: readonly LocalPart[] | null,
  ) {
    let end = releaseDigits.length;
    while (end > 0 && releaseDigits[end - 1] === "0") end--;
    this.releaseKey = releaseDigits.slice(0, end);
  }

  /** null for anything packaging's Version() refuses. */
  static parse(text: string): Pep440Version | null {
    const m = VERSION_RE.exec(text);
    if (!m) return null;
    return new Pep440Version(
      digitsOf(m[1] ?? "0"),
      (m[2] as string).split(".").map(digitsOf),
      letterVersion(m[3], m[4]),
      letterVersion(m[6], m[5] ?? m[7]),
      m[8] !== undefined ? digitsOf(m[9] ?? "0") : null,
      localParts(m[10]),
    );
  }

  get epoch(): number {
    return Number(this.epochDigits);
  }
  get release(): number[] {
    return this.releaseDigits.map(Number);
  }
  /** ["a" | "b" | "rc", number], or null for no pre-release segment. */
  get pre(): [string, number] | null {
    return this.preSegment && [this.preSegment.letter, Number(this.preSegment.digits)];
  }
  get post(): number | null {
    return this.postSegment && Number(this.postSegment.digits);
  }
  get dev(): number | null {
    return this.devDigits === null ? null : Number(this.devDigits);
  }
  /** The normalised local segment ("cu128", "5228986c39.nv25.8"), or null. */
  get local(): string | null {
    return this.localSegment && this.localSegment.map((part) => part.text).join(".");
  }
  /** A pre-release or a development release (packaging's `is_prerelease`). */
  get isPrerelease(): boolean {
    return this.preSegment !== null || this.devDigits !== null;
  }
  get isPostrelease(): boolean {
    return this.postSegment !== null;
  }
  get isDevrelease(): boolean {
    return this.devDigits !== null;
  }
  /** The version without its local segment, normalised ("2.8.0a0" for "2.8.0a0+5228986c39.nv25.08"). */
  get public(): string {
    const text = this.toString();
    const plus = text.indexOf("+");
    return plus < 0 ? text : text.slice(0, plus);
  }
  /** Epoch and release only ("1!2.8.0" for "1!2.8.0rc1.post2+local"). */
  get baseVersion(): string {
    return `${this.epochDigits === "0" ? "" : `${this.epochDigits}!`}${this.releaseDigits.join(".")}`;
  }
  /**
   * Whether packaging can read the public version's text back. Not so only where a pre-release
   * was spelled with U+0130 ("1.0PREV\u0130EW"), whose lower case is two characters: packaging
   * then raises where it re-reads the text, or compares it as text (see pep440-specifier.ts).
   */
  get publicReadsBack(): boolean {
    const letter = this.preSegment?.letter;
    if (letter === undefined || letter === "a" || letter === "b" || letter === "rc") return true;
    return Pep440Version.parse(this.public) !== null;
  }

  /**
   * The public version as packaging re-reads it (`Version(v.public)`): no local segment, and a
   * post-release letter spelled oddly ("po\u017ft") read back as "post", as str() writes it.
   */
  withoutLocal(): Pep440Version {
    if (this.publicVersion) return this.publicVersion;
    const post = this.postSegment;
    this.publicVersion =
      this.localSegment === null && (post === null || post.letter === "post")
        ? this
        : new Pep440Version(
            this.epochDigits,
            this.releaseDigits,
            this.preSegment,
            post && { letter: "post", digits: post.digits },
            this.devDigits,
            null,
          );
    return this.publicVersion;
  }
  /** The base version as a version (what the exclusive `<` and `>` compare). */
  base(): Pep440Version {
    this.baseVersionValue ??= new Pep440Version(this.epochDigits, this.releaseDigits, null, null, null, null);
    return this.baseVersionValue;
  }

  /** packaging's str(): the normalised form ("1.0a1.post2.dev3+ubuntu.1"). */
  toString(): string {
    if (this.text !== undefined) return this.text;
    let text = this.baseVersion;
    if (this.preSegment) text += this.preSegment.letter + this.preSegment.digits;
    if (this.postSegment) text += `.post${this.postSegment.digits}`;
    if (this.devDigits !== null) text += `.dev${this.devDigits}`;
    if (this.localSegment) text += `+${this.local}`;
    this.text = text;
    return text;
  }

  /** Negative, 0 or positive as this version sorts before, with or after `other` (PEP 440 order, local versions included). */
  compare(other: Pep440Version): number {
    return (
      compareDigits(this.epochDigits, other.epochDigits) ||
      compareReleases(this.releaseKey, other.releaseKey) ||
      compareOptional(this.preKey(), other.preKey(), 1, (a, b) =>
        a === "devOnly" || b === "devOnly" ? (a === b ? 0 : a === "devOnly" ? -1 : 1) : compareLettered(a, b),
      ) ||
      compareOptional(this.postSegment, other.postSegment, -1, compareLettered) ||
      compareOptional(this.devDigits, other.devDigits, 1, compareDigits) ||
      compareOptional(this.localSegment, other.localSegment, -1, compareLocal)
    );
  }

  equals(other: Pep440Version): boolean {
    return this.compare(other) === 0;
  }

  /** packaging's sort key for pre: a bare dev release (1.0.dev0) sorts before every pre-release. */
  private preKey(): Lettered | "devOnly" | null {
    if (this.preSegment) return this.preSegment;
    return this.postSegment === null && this.devDigits !== null ? "devOnly" : null;
  }
}

/** The parsed version, or null when `text` is not a PEP 440 version. */
export function parsePep440Version(text: string): Pep440Version | null {
  return Pep440Version.parse(text);
}
