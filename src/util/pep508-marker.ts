/**
 * PEP 508 environment markers (https://packaging.python.org/en/latest/specifications/dependency-specifiers/#environment-markers),
 * evaluated as Python's `packaging.markers.Marker.evaluate` 23.0 does (checked by
 * src/util/pep440-differential.test.ts): a comparison whose right side reads as a version
 * specifier (`python_version >= "3.10"`) is judged by PEP 440 with pre-releases admitted; any
 * other is Python's string comparison; `extra` names compare normalised (PEP 685).
 *
 * The environment may be partial: a variable it lacks (or gives as null) is unknown, and the
 * marker is then true or false only where the known parts decide it (three-valued and/or).
 */
import { canonicalizeName, comparePyStrings } from "./pep440-python-text.js";
import { parseSpecifier } from "./pep440-specifier.js";
import { Pep440Version } from "./pep440-version.js";
import {
  type MarkerItem,
  type MarkerList,
  type MarkerOperand,
  Pep508SyntaxError,
  parseMarkerSyntax,
} from "./pep508-parser.js";

/** Every variable packaging's default environment has, plus `extra`. */
const MARKER_VARIABLES = [
  "implementation_name",
  "implementation_version",
  "os_name",
  "platform_machine",
  "platform_release",
  "platform_system",
  "platform_version",
  "python_full_version",
  "platform_python_implementation",
  "python_version",
  "sys_platform",
  "extra",
] as const;

type MarkerVariable = (typeof MARKER_VARIABLES)[number];

/** The machine a marker is judged for; a variable left out or null is unknown. */
export type MarkerEnvironment = { readonly [K in MarkerVariable]?: string | null };

/** Unknown: the environment lacks a variable the answer depends on. */
const UNKNOWN = "unknown";
/** packaging raises (InvalidVersion, UndefinedComparison, KeyError): no answer. */
class MarkerEvaluationError extends Error {}

type Verdict = boolean | typeof UNKNOWN;

/** A parsed marker. */
export class Marker {
  /** @internal Built by parseMarker and parseRequirement. */
  constructor(private readonly markers: MarkerList) {}

  /** packaging's str(): variables bare, values in double quotes, parentheses where nested. */
  toString(): string {
    return formatMarker(this.markers, true);
  }

  /** true / false where the environment decides it; null where it lacks a variable that matters, or packaging would raise. */
  evaluate(environment: MarkerEnvironment): boolean | null {
    try {
      const verdict = evaluateList(this.markers, environment);
      return verdict === UNKNOWN ? null : verdict;
    } catch (error) {
      if (error instanceof MarkerEvaluationError) return null;
      throw error;
    }
  }
}

interface InvalidMarker {
  readonly error: "invalid-marker";
  readonly text: string;
  readonly message: string;
}

/**
 * packaging's _normalize_extra_values: where the FIRST item of the top level compares `extra`,
 * the other side is normalised at parse time, and becomes a value even if it was a variable.
 */
export function normalizeExtraValues(markers: MarkerList): MarkerList {
  const first = markers[0];
  if (first === undefined || typeof first === "string" || Array.isArray(first)) return markers;
  const item = first;
  let { left, right } = item;
  if (left.kind === "variable" && left.value === "extra")
    right = { kind: "value", value: canonicalizeName(right.value) };
  else if (right.kind === "variable" && right.value === "extra")
    left = { kind: "value", value: canonicalizeName(left.value) };
  return [{ left, op: item.op, right }, ...markers.slice(1)];
}

/** The marker, or an InvalidMarker with packaging's reason. */
export function parseMarker(text: string): Marker | InvalidMarker {
  try {
    return new Marker(normalizeExtraValues(parseMarkerSyntax(text)));
  } catch (error) {
    if (!(error instanceof Pep508SyntaxError)) throw error;
    return { error: "invalid-marker", text, message: error.message };
  }
}

/**
 * true / false where `marker` can be judged for this environment; null where it cannot (a
 * variable it needs is unknown, the marker is not PEP 508, or packaging would raise on it).
 */
export function evaluateMarker(marker: string | Marker, env: MarkerEnvironment): boolean | null {
  const parsed = typeof marker === "string" ? parseMarker(marker) : marker;
  return parsed instanceof Marker ? parsed.evaluate(env) : null;
}

function formatMarker(marker: MarkerList | MarkerItem | string, first: boolean): string {
  if (Array.isArray(marker)) {
    const only = marker[0];
    if (marker.length === 1 && only !== undefined && typeof only !== "string")
      return formatMarker(only, true);
    const inner = marker.map((m) => formatMarker(m, false)).join(" ");
    return first ? inner : `(${inner})`;
  }
  if (typeof marker === "string") return marker;
  const item = marker;
  return `${serialize(item.left)} ${item.op} ${serialize(item.right)}`;
}

function serialize(operand: MarkerOperand): string {
  return operand.kind === "variable" ? operand.value : `"${operand.value}"`;
}

/** packaging's _evaluate_markers: `or` splits groups; every item is evaluated (an error anywhere raises). */
function evaluateList(markers: MarkerList, env: MarkerEnvironment): Verdict {
  const groups: Verdict[][] = [[]];
  for (const marker of markers) {
    const group = groups[groups.length - 1] as Verdict[];
    if (Array.isArray(marker)) group.push(evaluateList(marker, env));
    else if (typeof marker === "string") {
      if (marker === "or") groups.push([]);
    } else group.push(evaluateItem(marker, env));
  }
  return anyOf(groups.map(allOf));
}

function allOf(verdicts: Verdict[]): Verdict {
  if (verdicts.includes(false)) return false;
  return verdicts.includes(UNKNOWN) ? UNKNOWN : true;
}

function anyOf(verdicts: Verdict[]): Verdict {
  if (verdicts.includes(true)) return true;
  return verdicts.includes(UNKNOWN) ? UNKNOWN : false;
}

/**
 * The environment's value for `key`, or UNKNOWN (a string too, hence the plain return type): a
 * name that is no marker variable raises (KeyError), as in packaging.
 */
function lookup(env: MarkerEnvironment, key: string): string {
  if (!(MARKER_VARIABLES as readonly string[]).includes(key))
    throw new MarkerEvaluationError(`no marker variable ${key}`);
  return env[key as MarkerVariable] ?? UNKNOWN;
}

/**
 * One comparison. As in packaging, the variable's side is looked up and the other side taken as
 * written; where both sides are values, the right one is looked up as a variable name.
 */
function evaluateItem(item: MarkerItem, env: MarkerEnvironment): Verdict {
  const key = item.left.kind === "variable" ? item.left.value : item.right.value;
  const looked = lookup(env, key);
  if (looked === UNKNOWN) return UNKNOWN;
  let [lhs, rhs] = item.left.kind === "variable" ? [looked, item.right.value] : [item.left.value, looked];
  if (key === "extra") [lhs, rhs] = [canonicalizeName(lhs), canonicalizeName(rhs)];
  return compare(lhs, item.op, rhs);
}

/** packaging's _eval_op: a PEP 440 comparison where `op rhs` is a specifier, else Python's string operator. */
function compare(lhs: string, op: string, rhs: string): boolean {
  const specifier = parseSpecifier(op + rhs);
  if (specifier) {
    const version = Pep440Version.parse(lhs);
    if (!version) throw new MarkerEvaluationError(`${lhs} is not a PEP 440 version`);
    return specifier.contains(version, true);
  }
  switch (op) {
    case "in":
      return rhs.includes(lhs);
    case "not in":
      return !rhs.includes(lhs);
    case "==":
      return lhs === rhs;
    case "!=":
      return lhs !== rhs;
    case "<":
      return comparePyStrings(lhs, rhs) < 0;
    case "<=":
      return comparePyStrings(lhs, rhs) <= 0;
    case ">":
      return comparePyStrings(lhs, rhs) > 0;
    case ">=":
      return comparePyStrings(lhs, rhs) >= 0;
    default:
      throw new MarkerEvaluationError(`${op} is undefined on ${lhs} and ${rhs}`);
  }
}
