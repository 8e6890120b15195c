/**
 * Lock and requirements files as lists of the wheels they would install: uv.lock (every package
 * with the wheels uv locked for it), pylock.toml (PEP 751, https://peps.python.org/pep-0751/), and
 * requirements files (pins resolved later through their --index-url / --find-links, with their
 * --hash values). Read with the lock-file cap of util/safe-read; nothing is fetched here.
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseToml, TomlError } from "smol-toml";
import { UserError } from "../errors.js";
import { normalizeName } from "../util/package-name.js";
import { READ_LIMITS, printablePrefix, readTextFile } from "../util/safe-read.js";

interface LockedWheel {
  filename: string;
  /** An http(s) or file: URL. */
  url: string;
  sha256: string | null;
  size: number | null;
}

export interface LockedPackage {
  name: string;
  version: string | null;
  /** For a requirements line without a URL: its specifier ("==2.11.0"), resolved through the indexes. */
  specifier: string | null;
  wheels: LockedWheel[];
  /** PEP 508 markers under which it is installed (uv's resolution-markers joined by or). */
  marker: string | null;
  /** requirements lines: the --hash values allowed. */
  hashes: string[];
  /** "uv.lock: package torch 2.11.0", "requirements.txt:12" */
  origin: string;
}

export interface LockFile {
  kind: "uv.lock" | "pylock.toml" | "requirements";
  path: string;
  packages: LockedPackage[];
  /** --index-url first, then --extra-index-url (requirements files). */
  indexUrls: string[];
  findLinks: string[];
  requiresPython: string | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

function parseTomlFile(path: string): Record<string, unknown> {
  const content = readTextFile(path, {
    maxBytes: READ_LIMITS.lockfile,
    hint: "give a uv.lock, pylock.toml or requirements file",
  });
  try {
    return parseToml(content);
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "invalid TOML";
      throw new UserError(
        `${path}:${error.line}: invalid TOML: ${printablePrefix(reason, 120)}`,
        `fix line ${error.line} of ${basename(path)}`,
      );
    }
    throw error;
  }
}

/** A URL or a path relative to the lock file, as a URL. */
function locate(value: string, lockPath: string): string | null {
  if (/^https?:\/\//i.test(value) || value.startsWith("file:")) return value;
  if (value.includes("://")) return null;
  return pathToFileURL(isAbsolute(value) ? value : resolve(dirname(lockPath), value)).toString();
}

function filenameOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    return "";
  }
}

function sha256Of(value: unknown): string | null {
  const hash = text(value);
  const match = hash ? /^sha256[:=]([0-9a-fA-F]{64})$/.exec(hash) : null;
  return match ? (match[1] as string).toLowerCase() : null;
}

function uvWheels(entry: Record<string, unknown>, path: string): LockedWheel[] {
  const wheels: LockedWheel[] = [];
  if (!Array.isArray(entry["wheels"])) return wheels;
  for (const wheel of entry["wheels"]) {
    if (!isObject(wheel)) continue;
    const where = text(wheel["url"]) ?? text(wheel["path"]);
    const url = where ? locate(where, path) : null;
    if (!url) continue;
    const filename = text(wheel["filename"]) ?? filenameOf(url);
    if (!filename.endsWith(".whl")) continue;
    const size = wheel["size"];
    wheels.push({
      filename,
      url,
      sha256: sha256Of(wheel["hash"]),
      size: typeof size === "number" && Number.isSafeInteger(size) ? size : null,
    });
  }
  return wheels;
}

function readUvLock(path: string, doc: Record<string, unknown>): LockFile {
  const packages: LockedPackage[] = [];
  for (const entry of Array.isArray(doc["package"]) ? doc["package"] : []) {
    if (!isObject(entry) || typeof entry["name"] !== "string") continue;
    const markers = Array.isArray(entry["resolution-markers"])
      ? entry["resolution-markers"].filter((m): m is string => typeof m === "string")
      : [];
    const version = text(entry["version"]);
    packages.push({
      name: entry["name"],
      version,
      specifier: null,
      wheels: uvWheels(entry, path),
      marker: markers.length ? markers.map((m) => `(${m})`).join(" or ") : null,
      hashes: [],
      origin: `${basename(path)}: package ${entry["name"]} ${version ?? ""}`.trim(),
    });
  }
  return {
    kind: "uv.lock",
    path,
    packages,
    indexUrls: [],
    findLinks: [],
    requiresPython: text(doc["requires-python"]),
  };
}

function readPylock(path: string, doc: Record<string, unknown>): LockFile {
  const packages: LockedPackage[] = [];
  for (const entry of Array.isArray(doc["packages"]) ? doc["packages"] : []) {
    if (!isObject(entry) || typeof entry["name"] !== "string") continue;
    const wheels: LockedWheel[] = [];
    for (const wheel of Array.isArray(entry["wheels"]) ? entry["wheels"] : []) {
      if (!isObject(wheel)) continue;
      const where = text(wheel["url"]) ?? text(wheel["path"]);
      const url = where ? locate(where, path) : null;
      if (!url) continue;
      const filename = text(wheel["name"]) ?? filenameOf(url);
      if (!filename.endsWith(".whl")) continue;
      const hashes = isObject(wheel["hashes"]) ? wheel["hashes"] : {};
      const size = wheel["size"];
      wheels.push({
        filename,
        url,
        sha256: sha256Of(typeof hashes["sha256"] === "string" ? `sha256:${hashes["sha256"]}` : null),
        size: typeof size === "number" && Number.isSafeInteger(size) ? size : null,
      });
    }
    const version = text(entry["version"]);
    packages.push({
      name: entry["name"],
      version,
      specifier: null,
      wheels,
      marker: text(entry["marker"]),
      hashes: [],
      origin: `${basename(path)}: packages ${entry["name"]} ${version ?? ""}`.trim(),
    });
  }
  return {
    kind: "pylock.toml",
    path,
    packages,
    indexUrls: [],
    findLinks: [],
    requiresPython: text(doc["requires-python"]),
  };
}

const REQUIREMENT = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$/;
const MAX_INCLUDE_DEPTH = 5;

interface RequirementsState {
  packages: LockedPackage[];
  indexUrls: string[];
  extraIndexUrls: string[];
  findLinks: string[];
  seen: Set<string>;
}

/** Logical lines: continuations joined, comments dropped, with the number of the first physical line. */
function logicalLines(content: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let pending = "";
  let start = 0;
  content.split(/\r?\n/).forEach((raw, index) => {
    if (pending === "") start = index + 1;
    const withoutComment = raw.replace(/(^|\s)#.*$/, "");
    if (withoutComment.endsWith("\\")) {
      pending += withoutComment.slice(0, -1) + " ";
      return;
    }
    const line = (pending + withoutComment).trim();
    pending = "";
    if (line) out.push({ line, number: start });
  });
  return out;
}

function optionValue(line: string, names: string[]): string | null {
  for (const name of names) {
    const match = new RegExp(`^${name}(?:\\s*=\\s*|\\s+)(\\S+)$`).exec(line);
    if (match) return match[1] as string;
  }
  return null;
}

function requirementLine(line: string, origin: string, path: string): LockedPackage | null {
  const hashes = [...line.matchAll(/--hash[=\s]+sha256:([0-9a-fA-F]{64})/g)].map((m) =>
    (m[1] as string).toLowerCase(),
  );
  const body = line.replace(/\s--hash[=\s]+\S+/g, "").trim();
  const [requirement, marker] = body.split(/;(.*)/s).map((part) => part?.trim() ?? "") as [string, string];
  const direct = /^(?:([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*)?(\S+\.whl)$/.exec(requirement);
  if (direct) {
    const url = locate(direct[2] as string, path);
    if (!url) return null;
    const filename = filenameOf(url);
    return {
      name: direct[1] ?? filename.split("-")[0] ?? filename,
      version: null,
      specifier: null,
      wheels: [{ filename, url, sha256: hashes[0] ?? null, size: null }],
      marker: marker || null,
      hashes,
      origin,
    };
  }
  const match = REQUIREMENT.exec(requirement);
  if (!match || requirement.includes("@")) return null;
  return {
    name: match[1] as string,
    version: null,
    specifier: (match[3] as string).replace(/\s+/g, ""),
    wheels: [],
    marker: marker || null,
    hashes,
    origin,
  };
}

function readRequirementsInto(path: string, state: RequirementsState, depth: number): void {
  const real = resolve(path);
  if (state.seen.has(real)) return;
  state.seen.add(real);
  const content = readTextFile(path, { maxBytes: READ_LIMITS.manifest, hint: "give a requirements file" });
  for (const { line, number } of logicalLines(content)) {
    const origin = `${basename(path)}:${number}`;
    const include = optionValue(line, ["-r", "--requirement"]);
    if (include !== null) {
      if (depth >= MAX_INCLUDE_DEPTH)
        throw new UserError(
          `${origin}: -r nested more than ${MAX_INCLUDE_DEPTH} deep`,
          "flatten the requirements files",
        );
      readRequirementsInto(isAbsolute(include) ? include : join(dirname(path), include), state, depth + 1);
      continue;
    }
    const index = optionValue(line, ["-i", "--index-url"]);
    if (index !== null) {
      state.indexUrls.push(index);
      continue;
    }
    const extra = optionValue(line, ["--extra-index-url"]);
    if (extra !== null) {
      state.extraIndexUrls.push(extra);
      continue;
    }
    const links = optionValue(line, ["-f", "--find-links"]);
    if (links !== null) {
      state.findLinks.push(
        /^https?:\/\//.test(links) || isAbsolute(links) ? links : join(dirname(path), links),
      );
      continue;
    }
    if (line.startsWith("-")) continue; // --no-binary, -c constraints, --pre ...: not what is installed
    const requirement = requirementLine(line, origin, path);
    if (requirement) state.packages.push(requirement);
  }
}

/** A lock or requirements file, told apart by its name (uv.lock, pylock*.toml, anything else a requirements file). */
export function readLockFile(path: string): LockFile {
  const name = basename(path);
  if (name === "uv.lock") return readUvLock(path, parseTomlFile(path));
  if (/^pylock(\.[^.]+)?\.toml$/.test(name)) return readPylock(path, parseTomlFile(path));
  if (name.endsWith(".toml") || name.endsWith(".lock"))
    throw new UserError(
      `${path}: not a lock file gpuprep reads`,
      "give uv.lock, pylock.toml (pylock.NAME.toml) or a requirements file",
    );
  const state: RequirementsState = {
    packages: [],
    indexUrls: [],
    extraIndexUrls: [],
    findLinks: [],
    seen: new Set(),
  };
  readRequirementsInto(path, state, 0);
  // One entry per project: the first line that names it.
  const seen = new Set<string>();
  const packages = state.packages.filter(
    (p) => !seen.has(normalizeName(p.name)) && seen.add(normalizeName(p.name)),
  );
  return {
    kind: "requirements",
    path,
    packages,
    indexUrls: [...(state.indexUrls.length ? state.indexUrls : []), ...state.extraIndexUrls],
    findLinks: state.findLinks,
    requiresPython: null,
  };
}
