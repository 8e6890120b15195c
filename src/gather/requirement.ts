/** PEP 508 requirement strings ("torch[opt]==2.5.1 ; sys_platform == 'linux'") into Requirement facts. */
import type { Requirement } from "../facts/schema.js";
import { normalizeName } from "../util/package-name.js";

export { normalizeName };

const NAME = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*(.*)$/s;
const SPECIFIER = /^(?:(?:===|~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)+$/;

/**
 * A wheel file name, name-version(-build)?-python-abi-platform.whl, split by hand: the regex this
 * replaces was unanchored and backtracked, so a long URL of dashes took minutes (issue 12).
 * As before, everything before the last four fields is the name.
 */
function wheelNameAndVersion(location: string): [string, string] | null {
  const file = location.slice(Math.max(location.lastIndexOf("/"), location.lastIndexOf("\\")) + 1);
  if (!file.endsWith(".whl")) return null;
  const parts = file.slice(0, -".whl".length).split("-");
  if (parts.length < 5 || parts.some((p) => p === "")) return null;
  return [parts.slice(0, -4).join("-"), parts[parts.length - 4]!];
}

/** pip's VCS / archive URL form, git+https://...@v1.0#egg=name: the name, found without backtracking. */
function eggName(text: string): string | null {
  const token = text.split(/\s/)[0] ?? "";
  if (!/^(?:[a-z]+\+)?[a-z]+:\/\//.test(token)) return null;
  const hash = token.indexOf("#");
  if (hash < 0) return null;
  return /(?:^|[&#])egg=([A-Za-z0-9._-]+)/.exec(token.slice(hash + 1))?.[1] ?? null;
}

/** Returns null when `raw` is not a valid requirement (the caller names file and line). */
export function parseRequirement(raw: string, origin: string): Requirement | null {
  const text = raw.trim();
  // A bare wheel URL or path: the name and version come from the file name.
  const wheel = /^(?:https?:|file:|\.{0,2}\/)/.test(text)
    ? wheelNameAndVersion(text.split(/[;#\s]/)[0] ?? "")
    : null;
  if (wheel) {
    const [name, version] = wheel;
    return requirement(name, `==${version}`, [], markerOf(text), text.split(/\s/)[0] ?? null, raw, origin);
  }
  // pip's VCS / archive URL form: git+https://...@v1.0#egg=name
  const egg = eggName(text);
  if (egg) return requirement(egg, "", [], markerOf(text), text.split(/\s/)[0] ?? null, raw, origin);
  const match = NAME.exec(text);
  if (!match) return null;
  const [, name = "", extrasText, rest = ""] = match;
  const extras = extrasText
    ? extrasText
        .split(",")
        .map((e) => e.trim())
        .filter(Boolean)
    : [];
  let url: string | null = null;
  let specifier = "";
  let marker: string | null = null;
  if (rest.startsWith("@")) {
    // PEP 508: a URL requirement's marker must be separated from the URL by whitespace.
    const urlMatch = /^@\s*(\S+)(?:\s+;\s*(.*))?$/s.exec(rest);
    if (!urlMatch) return null;
    url = urlMatch[1] ?? null;
    marker = urlMatch[2]?.trim() || null;
  } else {
    const semicolon = rest.indexOf(";");
    const specText = (semicolon >= 0 ? rest.slice(0, semicolon) : rest).trim().replace(/^\((.*)\)$/s, "$1");
    marker = semicolon >= 0 ? rest.slice(semicolon + 1).trim() || null : null;
    specifier = specText.replace(/\s+/g, "");
    if (specifier !== "" && !SPECIFIER.test(specifier)) return null;
  }
  return requirement(name, specifier, extras, marker, url, raw, origin);
}

function markerOf(text: string): string | null {
  const semicolon = text.indexOf(";");
  return semicolon >= 0 ? text.slice(semicolon + 1).trim() || null : null;
}

function requirement(
  name: string,
  specifier: string,
  extras: string[],
  marker: string | null,
  url: string | null,
  raw: string,
  origin: string,
): Requirement {
  return {
    name,
    normalizedName: normalizeName(name),
    specifier,
    extras,
    marker,
    url,
    raw: raw.trim(),
    origin,
  };
}
