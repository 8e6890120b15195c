/**
 * The generated corpus of the PEP 440 / PEP 508 differential: versions, specifier sets,
 * requirement strings and markers, drawn from a seeded generator (the same seed gives the same
 * corpus), with the questions bench/pep440_reference.py answers with Python's `packaging` and
 * `answer()` answers with src/util. Used by src/util/pep440-differential.test.ts (fixed seeds, in
 * `npm test`) and bench/pep440-differential.mjs (a million pairs and more).
 *
 * The generator aims at where implementations differ: versions and specifiers built around one
 * release (so `<V`, `>V`, `~=`, `==V.*` meet V's own pre-, post-, dev- and local versions), NGC
 * torch versions (2.9.0a0+50eac811a6.nv25.09), `+cu128` locals, epochs, every spelling and
 * separator PEP 440 allows, Python's odd case folds and whitespace, and text that is almost valid.
 */
import { ENVIRONMENTS, answerMarker, answerRequirement, marker, requirement } from "./pep508-answers.js";
import {
  Pep440Version,
  type SpecifierSet,
  isInvalidSpecifier,
  parsePep440Version,
  parseSpecifierSet,
} from "../src/util/pep440.js";

export type Request =
  | { k: "v"; v: string }
  | { k: "s"; s: string }
  | { k: "c"; v: string; s: string }
  | { k: "o"; a: string; b: string }
  | { k: "f"; s: string; vs: string[] }
  | { k: "r"; r: string }
  | { k: "m"; m: string; e: Record<string, string> };

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  /** One of `choices`, by weight: [[weight, value], ...]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of choices) total += w;
    let r = this.next() * total;
    for (const [w, value] of choices) {
      r -= w;
      if (r < 0) return value;
    }
    return (choices[choices.length - 1] as readonly [number, T])[1];
  }
}

/** Real versions: NGC torch and its tags, PyTorch wheels, conda builds, Pythons. */
const REAL_VERSIONS = [
  "2.9.0a0+50eac811a6.nv25.09",
  "2.8.0a0+5228986c39.nv25.08",
  "2.10.0a0+b558c986e8.nv25.11",
  "2.7.0a0+7c8ec84dab.nv25.03",
  "2.6.0a0+ecf3bae40a",
  "2.1.0a0+32f93b1",
  "1.14.0a0+44dac51",
  "1.14.0a0+410ce96",
  "2.5.1+cu124",
  "2.11.0+cu130",
  "2.8.0+cu128",
  "2.7.1+cpu",
  "1.13.1+cu117",
  "2.5.1",
  "2.7.1",
  "0.22.1",
  "1.26.4",
  "2.0.2",
  "3.12",
  "3.11.2",
  "3.13.0rc1",
  "3.14.0a1",
  "3.12.0b1",
  "2.9.0.dev20250701+cu128",
  "2.10.0.dev20251010",
  "0.0.post1",
  "1!1.0",
  "2024.8.30",
];

/** Almost versions: each is something a reader could take for one, and packaging does not. */
const NEAR_VERSIONS = [
  "",
  " ",
  "1..0",
  "1.",
  ".1",
  "1.0+",
  "1.0+-x",
  "1.0+a..b",
  "1.0+a_",
  "a1.0",
  "1.0a1a1",
  "1.0.post1.post2",
  "1.0-",
  "1.0-a",
  "latest",
  "2.5.1=py312_cu124",
  "2.5.1_cuda",
  "2.5.1.*",
  "1.0dev1dev",
  "1!",
  "!1.0",
  "1!2!3",
  "vv1.0",
  "1.0\ufeff",
  "\u0663.0",
  "1.0 a1",
  "1.0+cu 128",
  "1.0poſt1",
  "1.0prevıew2",
  "1.0PREVİEW",
  "1.0+K",
  "1.0+ſ.İ",
  "1.0\x1c",
  "\x851.0\u3000",
  "1.0\n",
  "1.0\n\n",
  "2.5.1 ",
  "1.0-1-1",
  "1.0-post1",
  "1.0.r",
  "1.0._a1",
];

const PRE_SPELLINGS = [
  "a",
  "b",
  "rc",
  "c",
  "alpha",
  "beta",
  "pre",
  "preview",
  "A",
  "RC",
  "Alpha",
  "Beta",
  "PREVIEW",
];
const POST_SPELLINGS = ["post", "rev", "r", "POST", "Rev", "R"];
const SEPARATORS = ["", "", "", ".", "-", "_"];
const LOCAL_PARTS = [
  "cu128",
  "cu124",
  "cpu",
  "nv25",
  "09",
  "08",
  "50eac811a6",
  "44dac51",
  "1",
  "007",
  "0",
  "ubuntu",
  "Abc",
  "rocm6",
  "2",
];
const MUTATION_CHARS = "0123456789.-_+!*abcdeprvostv ";

/** A release number: mostly small, sometimes a date, a leading zero, or past 2^64. */
function releaseNumber(rng: Random): string {
  return rng.weighted<() => string>([
    [70, () => String(rng.int(13))],
    [10, () => String(rng.int(100))],
    [6, () => rng.pick(["2024", "2025", "20250701", "999"])],
    [6, () => `0${rng.int(10)}`],
    [2, () => "18446744073709551617"],
    [6, () => "0"],
  ])();
}

/** A release near `base`: the same, padded with zeros, or one part moved by one. */
function releaseNear(rng: Random, base: readonly number[]): string[] {
  const parts = base.map(String);
  const r = rng.next();
  if (r < 0.35) return parts;
  if (r < 0.55) return [...parts, ...Array<string>(1 + rng.int(2)).fill("0")];
  if (r < 0.65 && parts.length > 1) return parts.slice(0, -1);
  const i = rng.int(parts.length);
  const moved = Math.max(0, Number(parts[i]) + (rng.chance(0.5) ? 1 : -1));
  return parts.map((p, j) => (j === i ? String(moved) : j > i && rng.chance(0.5) ? "0" : p));
}

function suffixes(rng: Random, probability: number): string {
  let text = "";
  if (rng.chance(0.35 * probability)) {
    text += rng.pick(SEPARATORS) + rng.pick(PRE_SPELLINGS) + rng.pick(SEPARATORS);
    text += rng.chance(0.8) ? String(rng.int(4)) : "";
  }
  if (rng.chance(0.2 * probability)) {
    text += rng.chance(0.2)
      ? `-${rng.int(3)}`
      : rng.pick(SEPARATORS) +
        rng.pick(POST_SPELLINGS) +
        rng.pick(SEPARATORS) +
        (rng.chance(0.8) ? String(rng.int(3)) : "");
  }
  if (rng.chance(0.15 * probability)) {
    text += rng.pick(SEPARATORS) + rng.pick(["dev", "DEV", "Dev"]) + rng.pick(SEPARATORS);
    text += rng.chance(0.8) ? String(rng.int(3)) : "";
  }
  return text;
}

function localSegment(rng: Random): string {
  const count = 1 + rng.int(3);
  let text = rng.pick(LOCAL_PARTS);
  for (let i = 1; i < count; i++) text += rng.pick([".", ".", "-", "_"]) + rng.pick(LOCAL_PARTS);
  return text;
}

/** One random edit (insert, delete, replace) of `text`. */
function mutate(rng: Random, text: string): string {
  const at = rng.int(text.length + 1);
  const char = MUTATION_CHARS[rng.int(MUTATION_CHARS.length)] as string;
  const op = rng.int(3);
  if (op === 0) return text.slice(0, at) + char + text.slice(at);
  if (op === 1) return text.slice(0, at) + text.slice(at + 1);
  return text.slice(0, at) + char + text.slice(at + 1);
}

/** A version near `base` (release parts), in any spelling PEP 440 allows, sometimes slightly broken. */
export function versionNear(rng: Random, base: readonly number[], local = true): string {
  const kind = rng.next();
  if (kind < 0.08) return rng.pick(REAL_VERSIONS);
  if (kind < 0.12) return rng.pick(NEAR_VERSIONS);
  let text = rng.chance(0.05) ? rng.pick(["v", "V"]) : "";
  if (rng.chance(0.06)) text += `${rng.pick(["0", "1", "2", "01"])}!`;
  text += releaseNear(rng, base).join(".");
  text += suffixes(rng, 1);
  if (local && rng.chance(0.25)) text += `+${localSegment(rng)}`;
  if (rng.chance(0.03)) text = rng.pick([" ", "\t", "\n", "\u00a0"]) + text + rng.pick(["", " ", "\r\n"]);
  if (rng.chance(0.06)) text = mutate(rng, text);
  return text;
}

/** A base release: a torch-like minor, a Python, or random parts. */
export function baseRelease(rng: Random): number[] {
  const kind = rng.next();
  if (kind < 0.4) return [rng.pick([1, 2]), rng.int(12), ...(rng.chance(0.5) ? [rng.int(3)] : [])];
  if (kind < 0.5) return [3, 8 + rng.int(7)];
  const length = 1 + rng.int(4);
  return Array.from({ length }, () => Number(releaseNumber(rng)) % 1000);
}

const OPERATORS: readonly (readonly [number, string])[] = [
  [20, ">="],
  [16, "<"],
  [14, "=="],
  [8, "!="],
  [8, "<="],
  [9, ">"],
  [11, "~="],
  [4, "==="],
  [7, "==*"],
  [3, "!=*"],
];

/** One specifier on a version near `base`, sometimes one packaging refuses. */
export function specifierNear(rng: Random, base: readonly number[]): string {
  const op = rng.weighted(OPERATORS);
  const space = rng.chance(0.15) ? rng.pick([" ", "  ", "\t"]) : "";
  if (rng.chance(0.03))
    return rng.pick([
      "=2.8",
      "=>2.8",
      "2.8",
      "==",
      "===",
      "=== 1.0 x",
      ">=2.8.*",
      "~=2",
      "<2.8+cu128",
      "==2.8a1.*",
      "~=2.8+local",
      "====1.0",
      "<=v1!1.0",
      "== 2.8.* ",
      ">=1.0.post1.dev2+x",
    ]);
  if (op === "==*" || op === "!=*") {
    const release = releaseNear(rng, base);
    const epoch = rng.chance(0.05) ? "1!" : "";
    return `${op.slice(0, 2)}${space}${rng.chance(0.04) ? "v" : ""}${epoch}${release.join(".")}.*`;
  }
  if (op === "===")
    return `===${space}${rng.chance(0.7) ? versionNear(rng, base) : rng.pick(["foo", "1.0-local", "2.8.0A0", "2.8.*"])}`;
  let version = versionNear(rng, base, op === "==" || op === "!=");
  if (op === "~=" && !version.includes(".") && rng.chance(0.7)) version += ".0";
  return `${op}${space}${version}`;
}

/** A specifier set of 0 to 3 specifiers around `base`, with the separators people write. */
export function specifierSetNear(rng: Random, base: readonly number[]): string {
  const count = rng.weighted([
    [4, 0],
    [50, 1],
    [36, 2],
    [10, 3],
  ]);
  const parts = Array.from({ length: count }, () => specifierNear(rng, base));
  let text = parts.join(rng.pick([",", ",", ", ", " ,", ",,"]));
  if (rng.chance(0.03)) text += ",";
  if (rng.chance(0.03)) text = ` ${text} `;
  return text;
}

/** Versions and specifier sets per family of pairs. */
const FAMILY = 12;

export interface CorpusSizes {
  pairs: number;
  orderings: number;
  filters: number;
  requirements: number;
  markers: number;
}

/** Every question of one corpus, in a fixed order for the seed. */
export function buildCorpus(seed: number, sizes: CorpusSizes): Request[] {
  const rng = new Random(seed);
  const requests: Request[] = [];
  const versions = new Set<string>();
  const sets = new Set<string>();
  // Pairs come in families: 12 versions and 12 specifier sets around one base release, every
  // version against every set, so each text is parsed once on each side and asked many questions.
  for (let done = 0; done < sizes.pairs;) {
    const base = baseRelease(rng);
    const family = Array.from({ length: FAMILY }, () => versionNear(rng, base));
    const familySets = Array.from({ length: FAMILY }, () => specifierSetNear(rng, base));
    for (const v of family) versions.add(v);
    for (const s of familySets) sets.add(s);
    for (const v of family)
      for (const s of familySets) {
        if (done++ >= sizes.pairs) break;
        requests.push({ k: "c", v, s });
      }
  }
  for (let i = 0; i < sizes.orderings; i++) {
    const base = baseRelease(rng);
    const a = versionNear(rng, base);
    const b = rng.chance(0.1) ? a : versionNear(rng, rng.chance(0.8) ? base : baseRelease(rng));
    versions.add(a);
    versions.add(b);
    requests.push({ k: "o", a, b });
  }
  for (let i = 0; i < sizes.filters; i++) {
    const base = baseRelease(rng);
    const s = rng.chance(0.1) ? "" : specifierSetNear(rng, base);
    const vs = Array.from({ length: 1 + rng.int(8) }, () => versionNear(rng, base));
    sets.add(s);
    requests.push({ k: "f", s, vs });
  }
  for (const v of versions) requests.push({ k: "v", v });
  for (const s of sets) requests.push({ k: "s", s });
  for (let i = 0; i < sizes.requirements; i++)
    requests.push({ k: "r", r: requirement(rng, () => specifierSetNear(rng, baseRelease(rng))) });
  for (let i = 0; i < sizes.markers; i++)
    requests.push({ k: "m", m: marker(rng), e: rng.pick(ENVIRONMENTS) });
  return requests;
}

type Answer = unknown;

const versionCache = new Map<string, Pep440Version | null>();
const setCache = new Map<string, SpecifierSet | null>();

function version(text: string): Pep440Version | null {
  let v = versionCache.get(text);
  if (v === undefined) {
    v = parsePep440Version(text);
    if (versionCache.size > 200_000) versionCache.clear();
    versionCache.set(text, v);
  }
  return v;
}

function specifierSet(text: string): SpecifierSet | null {
  let s = setCache.get(text);
  if (s === undefined) {
    const parsed = parseSpecifierSet(text);
    s = isInvalidSpecifier(parsed) ? null : parsed;
    if (setCache.size > 200_000) setCache.clear();
    setCache.set(text, s);
  }
  return s;
}

function versionFacts(text: string): Answer {
  const v = version(text);
  if (!v) return null;
  const pre = v.pre && [v.pre[0], String(v.pre[1])];
  return [
    v.toString(),
    v.public,
    v.baseVersion,
    v.isPrerelease,
    v.isPostrelease,
    v.isDevrelease,
    pre,
    numberText(v, "post"),
    numberText(v, "dev"),
    v.local,
  ];
}

/** The post or dev number as text, exact past 2^53 (read from the normalised string). */
function numberText(v: Pep440Version, segment: "post" | "dev"): string | null {
  const m = (segment === "post" ? POST_NUMBER : DEV_NUMBER).exec(v.public);
  return m ? (m[1] as string) : null;
}
const POST_NUMBER = /\.post([0-9]+)/;
const DEV_NUMBER = /\.dev([0-9]+)/;

function containsModes(request: { v: string; s: string }): Answer {
  const v = version(request.v);
  const s = specifierSet(request.s);
  if (!v || !s) return "skip";
  return [null, true, false].map((mode) => s.contains(v, mode));
}

function filterModes(request: { s: string; vs: string[] }): Answer {
  const s = specifierSet(request.s);
  const vs = request.vs.map(version);
  if (!s || vs.some((v) => v === null)) return "skip";
  const parsed = vs as Pep440Version[];
  return [null, true, false].map((mode) => {
    const kept = new Set(s.filter(parsed, mode));
    return parsed.flatMap((v, i) => (kept.has(v) ? [i] : []));
  });
}

/** What src/util answers to one question, in bench/pep440_reference.py's format. */
export function answer(request: Request): Answer {
  switch (request.k) {
    case "v":
      return versionFacts(request.v);
    case "s": {
      const s = specifierSet(request.s);
      return s && [s.toString(), s.prereleases];
    }
    case "c":
      return containsModes(request);
    case "o": {
      const a = version(request.a);
      const b = version(request.b);
      return a && b ? Math.sign(a.compare(b)) : "skip";
    }
    case "f":
      return filterModes(request);
    case "r":
      return answerRequirement(request.r);
    case "m":
      return answerMarker(request.m, request.e);
  }
}

/**
 * Where packaging 23.0 raises and src/util answers, by design:
 * - SpecifierSet.prereleases asks its specifiers in hash order and raises at a `===` whose text is
 *   no version (InvalidVersion), unless another specifier answered True first: packaging is not a
 *   function of its input there. Only the answers without a mode are affected.
 * - A version whose normalised text packaging cannot read back ("1.0PREV\u0130EW" lower-cases to
 *   "1.0previ\u0307ew0", two characters for one) makes the operators that re-read the public
 *   version (<=, >=, ==, ~=) raise.
 */
function packagingMayRaise(request: Request): boolean {
  if (request.k !== "s" && request.k !== "c" && request.k !== "f") return false;
  const s = specifierSet(request.s);
  if (s?.specifiers.some((spec) => spec.operator === "===" && parsePep440Version(spec.version) === null))
    return true;
  const texts = request.k === "c" ? [request.v] : request.k === "f" ? request.vs : [];
  return texts.some((text) => {
    const v = version(text);
    return v !== null && !v.publicReadsBack;
  });
}

/** Is every part of `theirs` equal to `mine`'s, or packaging raising where packagingMayRaise says it may? */
export function acceptedRaise(request: Request, mine: Answer, theirs: Answer): boolean {
  if (!packagingMayRaise(request) || !Array.isArray(mine) || !Array.isArray(theirs)) return false;
  if (mine.length !== theirs.length) return false;
  return mine.every((part, i) => theirs[i] === "E" || JSON.stringify(part) === JSON.stringify(theirs[i]));
}
