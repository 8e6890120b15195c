/**
 * PEP 440 as pip reads it (https://packaging.python.org/en/latest/specifications/version-specifiers/):
 * versions (pep440-version.ts) and specifier sets (pep440-specifier.ts), both proven equal to
 * Python's `packaging` 23.0 by src/util/pep440-differential.test.ts. This module is the entry:
 * parse once into Pep440Version / SpecifierSet, then ask the question pip asks.
 */
import { Pep440Version, parsePep440Version } from "./pep440-version.js";
import {
  type InvalidSpecifier,
  SpecifierSet,
  isInvalidSpecifier,
  parseSpecifierSet,
} from "./pep440-specifier.js";

export { Pep440Version, parsePep440Version } from "./pep440-version.js";
export { SpecifierSet, isInvalidSpecifier, parseSpecifierSet } from "./pep440-specifier.js";

/**
 * Would pip keep this already installed version for this requirement? (`prereleases=True`, as
 * pip's factory.py `_get_installed_candidate` asks; an NGC torch 2.8.0a0+... is kept by
 * `>=2.7` and refused by `<2.8`.)
 */
export function acceptsInstalled(specifier: SpecifierSet, version: Pep440Version): boolean {
  return specifier.contains(version, true);
}

/**
 * The versions pip would choose among from an index, in their order: packaging's filter with
 * pre-releases left to the specifier (`allowPrereleases` is pip's --pre).
 */
export function selectFromIndex<T extends Pep440Version>(
  specifier: SpecifierSet,
  versions: readonly T[],
  allowPrereleases = false,
): T[] {
  return specifier.filter(versions, allowPrereleases ? true : null);
}

/** @deprecated Use parsePep440Version: the same parse, named for what it returns. */
export function parseVersion(text: string): Pep440Version | null {
  return parsePep440Version(text);
}

/**
 * Does the installed `version` satisfy `specifier` (">=2.3,<3"; "" always does)? pip's answer
 * for an installed distribution (acceptsInstalled). null when either side is not PEP 440.
 */
export function satisfies(version: string, specifier: string): boolean | null {
  const parsedVersion = parsePep440Version(version);
  const parsedSpecifier: SpecifierSet | InvalidSpecifier = parseSpecifierSet(specifier);
  if (parsedVersion === null || isInvalidSpecifier(parsedSpecifier)) return null;
  return acceptsInstalled(parsedSpecifier, parsedVersion);
}
