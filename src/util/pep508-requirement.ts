/**
 * PEP 508 requirement strings (`torch[cuda]>=2.6,<2.8; python_version >= "3.10"`, `pkg @ URL`),
 * read as Python's `packaging.requirements.Requirement` 23.0 reads them (checked by
 * src/util/pep440-differential.test.ts), its URL check included: a `file:` URL must come back
 * unchanged from urllib.parse's urlparse/urlunparse, any other must have a scheme and a host.
 */
import { comparePyStrings } from "./pep440-python-text.js";
import {
  type InvalidSpecifier,
  type SpecifierSet,
  isInvalidSpecifier,
  parseSpecifierSet,
} from "./pep440-specifier.js";
import { Marker, normalizeExtraValues } from "./pep508-marker.js";
import { Pep508SyntaxError, parseRequirementSyntax } from "./pep508-parser.js";
import { urlError } from "./pep508-url.js";

/** A parsed requirement. */
export interface Requirement {
  /** As written (not normalised: compare with canonicalizeName). */
  readonly name: string;
  /** As written, once each, sorted. */
  readonly extras: readonly string[];
  readonly specifier: SpecifierSet;
  readonly url: string | null;
  readonly marker: Marker | null;
  /** packaging's str(): `name[extras]specifier@ url; marker`. */
  toString(): string;
}

interface InvalidRequirement {
  readonly error: "invalid-requirement";
  readonly text: string;
  /** packaging's reason: "Expected end or semicolon (after version specifier) ...", "Invalid URL: ..." */
  readonly message: string;
}

function invalid(text: string, message: string): InvalidRequirement {
  return { error: "invalid-requirement", text, message };
}

function format(r: Omit<Requirement, "toString">): string {
  let text = r.name;
  if (r.extras.length > 0) text += `[${r.extras.join(",")}]`;
  if (r.specifier.specifiers.length > 0) text += r.specifier.toString();
  if (r.url) text += `@ ${r.url}${r.marker ? " " : ""}`;
  if (r.marker) text += `; ${r.marker.toString()}`;
  return text;
}

/** The requirement, or an InvalidRequirement saying why packaging refuses it. */
export function parseRequirement(text: string): Requirement | InvalidRequirement {
  let parsed;
  try {
    parsed = parseRequirementSyntax(text);
  } catch (error) {
    if (error instanceof Pep508SyntaxError) return invalid(text, error.message);
    throw error;
  }
  if (parsed.url) {
    const problem = urlError(parsed.url);
    if (problem) return invalid(text, problem);
  }
  const specifier: SpecifierSet | InvalidSpecifier = parseSpecifierSet(parsed.specifier);
  if (isInvalidSpecifier(specifier)) return invalid(text, specifier.message);
  const fields = {
    name: parsed.name,
    extras: [...new Set(parsed.extras)].sort(comparePyStrings),
    specifier,
    url: parsed.url || null,
    marker: parsed.marker ? new Marker(normalizeExtraValues(parsed.marker)) : null,
  };
  const formatted = format(fields);
  return { ...fields, toString: () => formatted };
}

export function isInvalidRequirement(value: Requirement | InvalidRequirement): value is InvalidRequirement {
  return "error" in value;
}
