/**
 * Conda version specs and build strings, judged: does a version satisfy a conda spec ("2.5.*",
 * "==2.5.1", ">=2.4,<3", "2.5.*|2.6.*"), and what a build-string glob says about the variant
 * ("cuda126*", "cpu_*"). Conda's rules: https://docs.conda.io/projects/conda/en/stable/user-guide/concepts/pkg-specs.html
 */
import { compareNumberLists, leadingNumbers } from "./version.js";

/** Numeric parts of a conda version ("2.5.1" -> [2, 5, 1]); letters end it. */
const parts = leadingNumbers;

function compare(a: string, b: string): number {
  return compareNumberLists(parts(a), parts(b));
}

function clauseMatches(version: string, clause: string): boolean {
  const text = clause.trim();
  if (text === "" || text === "*") return true;
  const op = /^(>=|<=|==|!=|~=|>|<|=)?\s*(.+)$/.exec(text);
  if (!op) return false;
  const [, operator = "", target = ""] = op;
  if (target.endsWith("*")) {
    const prefix = parts(target.replace(/\.?\*$/, ""));
    const have = parts(version);
    const starts = prefix.every((n, i) => have[i] === n);
    return operator === "!=" ? !starts : starts;
  }
  const c = compare(version, target);
  switch (operator) {
    case ">=":
      return c >= 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    case "<":
      return c < 0;
    case "!=":
      return c !== 0;
    case "~=":
      return c >= 0 && parts(version)[0] === parts(target)[0];
    case "=":
      return parts(target).every((n, i) => parts(version)[i] === n);
    default:
      return c === 0;
  }
}

/** Does a concrete version ("2.5.1") satisfy a normalised conda version spec? */
export function condaVersionMatches(version: string, spec: string): boolean {
  if (spec.trim() === "") return true;
  return spec
    .split("|")
    .some((alternative) => alternative.split(",").every((c) => clauseMatches(version, c)));
}

/** What a build-string glob says about the variant: CPU, CUDA (optionally which, "12.6" / "12"), or nothing. */
export function buildVariant(
  build: string | null,
): { kind: "cpu" } | { kind: "cuda"; cuda: string | null } | null {
  if (!build) return null;
  const text = build.toLowerCase();
  if (text.includes("cpu")) return { kind: "cpu" };
  const cuda = /cuda(\d+(?:\.\d+)?)/.exec(text);
  if (cuda) {
    const digits = cuda[1] ?? "";
    // conda-forge writes cuda126 (no dot), the pytorch channel cuda12.4.
    if (digits.includes(".")) return { kind: "cuda", cuda: digits };
    if (digits.length >= 3) return { kind: "cuda", cuda: `${digits.slice(0, -1)}.${digits.slice(-1)}` };
    return { kind: "cuda", cuda: digits };
  }
  if (text.includes("cuda")) return { kind: "cuda", cuda: null };
  return null;
}
