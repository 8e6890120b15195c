/**
 * PEP 440 version specifiers and specifier sets, judged exactly as Python's
 * `packaging.specifiers` 23.0 does (checked by src/util/pep440-differential.test.ts), quirks
 * included: the exclusive `<V` refuses V's pre-releases unless V is one, `>V` refuses V's
 * post-releases and local versions, `~=` takes its prefix from the specifier's text as written.
 *
 * Which pre-release mode answers which question (pip's source, pypa/pip at
 * 6d309205789d368b2749d93fd6193d584811efd5):
 * - Is an INSTALLED version (an NGC image's torch, 2.8.0a0+5228986c39.nv25.08) acceptable?
 *   pip keeps an installed distribution when `specifier.contains(installed_dist.version,
 *   prereleases=True)` (src/pip/_internal/resolution/resolvelib/factory.py,
 *   `_get_installed_candidate`): `acceptsInstalled`, or `contains(v, true)`. A pre-release is
 *   not refused for being one, only by the operators themselves (`<2.8` still refuses 2.8.0a0).
 * - Which version would pip pick from an INDEX? `specifier.filter(candidates,
 *   prereleases=allow_prereleases)` where allow_prereleases is None unless `--pre` or
 *   `--all-releases`/`--only-final` name the package (src/pip/_internal/index/package_finder.py,
 *   `CandidateEvaluator.get_applicable_candidates`; src/pip/_internal/models/release_control.py):
 *   `selectFromIndex`, or `filter(versions, null)`. With packaging 23.0 a non-empty set then
 *   admits pre-releases only when one of its specifiers names one with ==, >=, <=, ~= or ===
 *   (`>=2.8.0a0`, not `<2.8.0a0`); an empty set admits them only when nothing final is offered.
 *   Newer packaging (26.x, which pip's main branch vendors) also admits them when nothing final
 *   matches: docs/benchmarks.md lists where the versions differ.
 */
import {
  ALNUM_IGNORECASE,
  PY_SPACE,
  S,
  comparePyStrings,
  ignoreCase,
  pyStrip,
} from "./pep440-python-text.js";
import { Pep440Version } from "./pep440-version.js";

type SpecifierOperator = "~=" | "==" | "!=" | "<=" | ">=" | "<" | ">" | "===";

/**
 * How `contains` treats a pre-release: true admits it (pip, for an installed version), false
 * refuses it, null lets the specifier decide (packaging's default: admitted only when one of the
 * specifiers names a pre-release).
 */
type PrereleaseMode = boolean | null;

const SEP = "[-_.]";
const LETTERS = `[${ALNUM_IGNORECASE}]`;
const PRE = `(?:${SEP}?(?:${["alpha", "beta", "preview", "pre", "a", "b", "c", "rc"].map(ignoreCase).join("|")})${SEP}?[0-9]*)?`;
const POST = `(?:(?:-[0-9]+)|(?:${SEP}?(?:${["post", "rev", "r"].map(ignoreCase).join("|")})${SEP}?[0-9]*))?`;
const DEV = `(?:${SEP}?${ignoreCase("dev")}${SEP}?[0-9]*)?`;
const LOCAL = `(?:\\+${LETTERS}+(?:${SEP}${LETTERS}+)*)?`;
const RELEASE = `${S}*${ignoreCase("v")}?(?:[0-9]+!)?[0-9]+`;
/**
 * packaging's Specifier._operator_regex_str + _version_regex_str: which version text each
 * operator takes is chosen by a lookbehind on the operator, as there.
 */
export const SPECIFIER_SOURCE =
  `(~=|==|!=|<=|>=|<|>|===)(` +
  `(?:(?<====)${S}*[^${PY_SPACE};)]*)` +
  `|(?:(?<===|!=)${RELEASE}(?:\\.[0-9]+)*(?:\\.\\*|${PRE}${POST}${DEV}${LOCAL})?)` +
  `|(?:(?<=~=)${RELEASE}(?:\\.[0-9]+)+${PRE}${POST}${DEV})` +
  `|(?:(?<!==|!=|~=)${RELEASE}(?:\\.[0-9]+)*${PRE}${POST}${DEV})` +
  `)`;
const SPECIFIER_RE = new RegExp(`^${S}*${SPECIFIER_SOURCE}${S}*$`);

/** packaging.utils.canonicalize_version of a parsed version. */
function canonicalVersion(version: Pep440Version, stripTrailingZero: boolean): string {
  const text = version.toString();
  const base = version.baseVersion;
  const epochEnd = base.indexOf("!") + 1;
  let release = base.slice(epochEnd);
  if (stripTrailingZero) release = release.replace(/(\.0)+$/, "");
  return base.slice(0, epochEnd) + release + text.slice(base.length);
}

/** canonicalize_version of text: text that is no version is returned as it is. */
function canonicalText(text: string, stripTrailingZero: boolean): string {
  const version = Pep440Version.parse(text);
  return version ? canonicalVersion(version, stripTrailingZero) : text;
}

/** packaging's _version_split: dotted parts, "1rc1" split into "1", "rc1". */
function versionSplit(text: string): string[] {
  const result: string[] = [];
  for (const item of text.split(".")) {
    const m = /^([0-9]+)((?:a|b|c|rc)[0-9]+)$/.exec(item);
    if (m) result.push(m[1] as string, m[2] as string);
    else result.push(item);
  }
  return result;
}

function isNotSuffix(segment: string): boolean {
  return !["dev", "a", "b", "rc", "post"].some((prefix) => segment.startsWith(prefix));
}

function leadingDigitItems(items: readonly string[]): number {
  let n = 0;
  while (n < items.length && /^[0-9]+$/.test(items[n] as string)) n++;
  return n;
}

/** packaging's _pad_version, left side only: zeros inserted after the release so it is as long as `right`'s. */
function padLeft(left: readonly string[], right: readonly string[]): string[] {
  const leftRelease = leadingDigitItems(left);
  const zeros = Math.max(0, leadingDigitItems(right) - leftRelease);
  return [...left.slice(0, leftRelease), ...Array<string>(zeros).fill("0"), ...left.slice(leftRelease)];
}

/** One specifier ("<2.8", "==2.9.*"), parsed once. */
class Specifier {
  /** What the operator compares against: the version (null for `==P.*`, `!=P.*` and a `===` that is none). */
  private readonly target: Pep440Version | null;
  /** The split parts of `==P.*` and `!=P.*`'s P, or of the prefix `~=` also demands. */
  private readonly wildcard: readonly string[] | null;

  constructor(
    readonly operator: SpecifierOperator,
    /** The version text as written (stripped): `~=` and `===` read it as text. */
    readonly version: string,
  ) {
    const isWildcard = (operator === "==" || operator === "!=") && version.endsWith(".*");
    this.target = isWildcard ? null : Pep440Version.parse(version);
    this.wildcard = isWildcard
      ? wildcardSplit(version.slice(0, -2))
      : operator === "~="
        ? wildcardSplit(compatiblePrefix(version))
        : null;
  }

  /** `==`/`!=` without `.*`, `===` and `~=` need a parsed target; the regex guarantees one except for `===`. */
  private get targetVersion(): Pep440Version {
    return this.target as Pep440Version;
  }

  /**
   * Whether this specifier, left to itself, admits pre-releases: it names one with ==, >=, <=,
   * ~= or ===. null for a `===` whose text is no version (packaging 23.0 raises there).
   */
  get prereleases(): boolean | null {
    if (!["==", ">=", "<=", "~=", "==="].includes(this.operator)) return false;
    const text =
      this.operator === "==" && this.version.endsWith(".*") ? this.version.slice(0, -2) : this.version;
    const version = this.target ?? Pep440Version.parse(text);
    return version ? version.isPrerelease : null;
  }

  /** Equal specifiers (packaging's `_canonical_spec`) collapse into one in a set. */
  get canonical(): string {
    return `${this.operator}${canonicalText(this.version, this.operator !== "~=")}`;
  }

  toString(): string {
    return this.operator + this.version;
  }

  /** The operator alone, pre-release mode aside. */
  matches(prospective: Pep440Version): boolean {
    switch (this.operator) {
      case "~=":
        return this.compatible(prospective);
      case "==":
        return this.equal(prospective);
      case "!=":
        return !this.equal(prospective);
      case "<=":
        return prospective.withoutLocal().compare(this.targetVersion) <= 0;
      case ">=":
        return prospective.withoutLocal().compare(this.targetVersion) >= 0;
      case "<":
        return this.lessThan(prospective);
      case ">":
        return this.greaterThan(prospective);
      case "===":
        return prospective.toString().toLowerCase() === this.version.toLowerCase();
    }
  }

  /** Specifier.contains with a pre-release mode already decided. */
  contains(prospective: Pep440Version, prereleases: boolean): boolean {
    if (prospective.isPrerelease && !prereleases) return false;
    return this.matches(prospective);
  }

  private equal(prospective: Pep440Version): boolean {
    if (this.wildcard !== null) return wildcardMatches(prospective, this.wildcard);
    const spec = this.targetVersion;
    return (spec.local === null ? prospective.withoutLocal() : prospective).equals(spec);
  }

  /** ~=V: >=V and ==P.* (see compatiblePrefix). */
  private compatible(prospective: Pep440Version): boolean {
    if (prospective.withoutLocal().compare(this.targetVersion) < 0) return false;
    return wildcardMatches(prospective, this.wildcard as readonly string[]);
  }

  /** <V refuses V's own pre-releases unless V is a pre-release (2.8.0a0 is not <2.8). */
  private lessThan(prospective: Pep440Version): boolean {
    const spec = this.targetVersion;
    if (!(prospective.compare(spec) < 0)) return false;
    return !(!spec.isPrerelease && prospective.isPrerelease && prospective.base().equals(spec.base()));
  }

  /** >V refuses V's own post-releases unless V is one, and V's local versions. */
  private greaterThan(prospective: Pep440Version): boolean {
    const spec = this.targetVersion;
    if (!(prospective.compare(spec) > 0)) return false;
    const sameBase = prospective.base().equals(spec.base());
    if (!spec.isPostrelease && prospective.isPostrelease && sameBase) return false;
    return !(prospective.local !== null && sameBase);
  }
}

/**
 * ~=V's P: V's text as written, split, up to the first part that starts like a suffix, less its
 * last part. So ~=1.4.5a4 gives 1.4, but ~=1.0.0.r1 gives 1.0.0 ("r1" does not start like one).
 */
function compatiblePrefix(version: string): string {
  const items = versionSplit(version);
  let kept = 0;
  while (kept < items.length && isNotSuffix(items[kept] as string)) kept++;
  return items.slice(0, kept).slice(0, -1).join(".");
}

function wildcardSplit(prefix: string): string[] {
  return versionSplit(canonicalText(prefix, false));
}

/** Each version's split canonical public form, computed once (wildcards and ~= ask for it often). */
const publicSplits = new WeakMap<Pep440Version, string[]>();

/**
 * ==P.*: the prospective's public version, trailing zeros stripped, padded and cut to P's length.
 * (A public version packaging cannot read back is taken as its text: canonicalize_version does so.)
 */
function wildcardMatches(prospective: Pep440Version, spec: readonly string[]): boolean {
  let split = publicSplits.get(prospective);
  if (split === undefined) {
    const canonical = prospective.publicReadsBack
      ? canonicalVersion(prospective.withoutLocal(), true)
      : prospective.public;
    split = versionSplit(canonical);
    publicSplits.set(prospective, split);
  }
  const shortened = padLeft(split, spec).slice(0, spec.length);
  return shortened.length === spec.length && shortened.every((item, i) => item === spec[i]);
}

/** A comma-separated specifier set (">=2.6,<2.8"); "" is the empty set, which every final release satisfies. */
export class SpecifierSet {
  constructor(readonly specifiers: readonly Specifier[]) {}

  /** Whether pre-releases are admitted when no mode is given: one of the specifiers names one. null when empty. */
  get prereleases(): boolean | null {
    if (this.specifiers.length === 0) return null;
    return this.specifiers.some((s) => s.prereleases === true);
  }

  /** Does `version` satisfy every specifier? See PrereleaseMode for `prereleases`. */
  contains(version: Pep440Version, prereleases: PrereleaseMode = null): boolean {
    const admitPre = prereleases ?? this.prereleases;
    if (!admitPre && version.isPrerelease) return false;
    return this.specifiers.every((s) => s.matches(version));
  }

  /**
   * packaging's SpecifierSet.filter: the versions that satisfy the set, in their order. With
   * mode null, an empty set offers pre-releases only when nothing else is offered.
   */
  filter<T extends Pep440Version>(versions: readonly T[], prereleases: PrereleaseMode = null): T[] {
    const admitPre = prereleases ?? this.prereleases;
    if (this.specifiers.length > 0) {
      return versions.filter(
        (v) => (admitPre || !v.isPrerelease) && this.specifiers.every((s) => s.matches(v)),
      );
    }
    const finals = versions.filter((v) => admitPre || !v.isPrerelease);
    return finals.length === 0 && admitPre === null ? [...versions] : finals;
  }

  /** packaging's str(): the specifiers sorted, joined by commas. */
  toString(): string {
    return this.specifiers.map(String).sort(comparePyStrings).join(",");
  }
}

export interface InvalidSpecifier {
  readonly error: "invalid-specifier";
  /** The specifier that could not be read. */
  readonly text: string;
  /** "'>=2.8.*' is not a PEP 440 version specifier" */
  readonly message: string;
}

/** One specifier's text, or null when packaging's Specifier() would refuse it. */
export function parseSpecifier(text: string): Specifier | null {
  const m = SPECIFIER_RE.exec(text);
  if (!m) return null;
  return new Specifier(m[1] as SpecifierOperator, pyStrip(m[2] as string));
}

/** The set, or an InvalidSpecifier naming the first specifier packaging would refuse. */
export function parseSpecifierSet(text: string): SpecifierSet | InvalidSpecifier {
  const specifiers: Specifier[] = [];
  const seen = new Set<string>();
  for (const piece of text.split(",")) {
    const clause = pyStrip(piece);
    if (clause === "") continue;
    const specifier = parseSpecifier(clause);
    if (!specifier) {
      return {
        error: "invalid-specifier",
        text: clause,
        message: `'${clause}' is not a PEP 440 version specifier`,
      };
    }
    // A set keeps the first of equal specifiers (it matters for ===1.0 and ===1.0.0).
    if (seen.has(specifier.canonical)) continue;
    seen.add(specifier.canonical);
    specifiers.push(specifier);
  }
  return new SpecifierSet(specifiers);
}

export function isInvalidSpecifier(value: SpecifierSet | InvalidSpecifier): value is InvalidSpecifier {
  return !(value instanceof SpecifierSet);
}
