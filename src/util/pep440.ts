/**
 * Just enough PEP 440 to tell whether an installed version satisfies a requirement's specifier
 * (https://packaging.python.org/en/latest/specifications/version-specifiers/): release parts,
 * pre/post/dev releases, local tags ignored unless the specifier names one, `==X.*` wildcards and
 * `~=`. Anything it cannot read (`===`, URLs) yields null so callers can say "unknown".
 */
import { compareNumberLists } from "./version.js";

interface ParsedVersion {
  release: number[];
  /** Pre-release as [phase, number]: a=0, b=1, rc=2; null for a final release. */
  pre: [number, number] | null;
  post: number | null;
  dev: number | null;
  local: string | null;
}

const VERSION_RE =
  /^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+([a-z0-9.]+))?$/i;

export function parseVersion(text: string): ParsedVersion | null {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return null;
  const phase = m[2]?.toLowerCase();
  const preIndex = phase === undefined ? -1 : phase.startsWith("a") ? 0 : phase.startsWith("b") ? 1 : 2;
  return {
    release: (m[1] as string).split(".").map(Number),
    pre: preIndex < 0 ? null : [preIndex, Number(m[3] || 0)],
    post: m[4] !== undefined ? Number(m[4] || 0) : null,
    dev: m[5] !== undefined ? Number(m[5] || 0) : null,
    local: m[6] ?? null,
  };
}

/** Total order of PEP 440 versions without local tags. */
function compareParsed(a: ParsedVersion, b: ParsedVersion): number {
  const release = compareNumberLists(a.release, b.release);
  if (release !== 0) return release;
  // dev-only < pre < final < post, per PEP 440.
  const rank = (v: ParsedVersion): number[] => [
    v.pre === null && v.dev !== null && v.post === null ? -1 : 0,
    v.pre ? v.pre[0] : 3,
    v.pre ? v.pre[1] : 0,
    v.post ?? -1,
    v.dev ?? Number.MAX_SAFE_INTEGER,
  ];
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < ra.length; i++) {
    const diff = (ra[i] as number) - (rb[i] as number);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** PEP 440 order of two version strings (local tags ignored); null when either does not read. */
export function comparePep440(a: string, b: string): number | null {
  const left = parseVersion(a);
  const right = parseVersion(b);
  return left && right ? compareParsed(left, right) : null;
}

function satisfiesClause(version: ParsedVersion, clause: string): boolean | null {
  const m = /^(===|==|!=|~=|>=|<=|>|<)\s*(.+)$/.exec(clause.trim());
  if (!m || m[1] === "===") return null;
  const op = m[1] as string;
  const target = (m[2] as string).trim();
  if ((op === "==" || op === "!=") && target.endsWith(".*")) {
    const prefix = parseVersion(target.slice(0, -2));
    if (!prefix) return null;
    const matches = prefix.release.every((part, i) => version.release[i] === part);
    return op === "==" ? matches : !matches;
  }
  const spec = parseVersion(target);
  if (!spec) return null;
  // A specifier without a local tag ignores the candidate's local tag (2.5.1+cu124 == 2.5.1).
  const candidate = spec.local === null ? { ...version, local: null } : version;
  const cmp = compareParsed(candidate, spec);
  switch (op) {
    case "==":
      return cmp === 0 && (spec.local === null || spec.local === version.local);
    case "!=":
      return !(cmp === 0 && (spec.local === null || spec.local === version.local));
    case ">=":
      return cmp >= 0;
    case "<=":
      return cmp <= 0;
    case ">":
      return cmp > 0;
    case "<":
      return cmp < 0;
    case "~=": {
      if (spec.release.length < 2) return null;
      const prefix = spec.release.slice(0, -1);
      return cmp >= 0 && prefix.every((part, i) => version.release[i] === part);
    }
    default:
      return null;
  }
}

/**
 * Does `version` satisfy `specifier` ("==2.5.1", ">=2.3,<3"); "" always does. null when either
 * side cannot be read. Pre-releases are compared by order only (pip would also need --pre to
 * pick one, but an installed one is kept when it satisfies the order).
 */
export function satisfies(version: string, specifier: string): boolean | null {
  if (specifier.trim() === "") return true;
  const parsed = parseVersion(version);
  if (!parsed) return null;
  let result: boolean | null = true;
  for (const clause of specifier.split(",")) {
    if (clause.trim() === "") continue;
    const verdict = satisfiesClause(parsed, clause);
    if (verdict === null) return null;
    result = result && verdict;
  }
  return result;
}
