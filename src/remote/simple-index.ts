/**
 * Package indexes as installers read them: the simple repository API, as HTML
 * (PEP 503, https://peps.python.org/pep-0503/) or JSON (PEP 691, https://peps.python.org/pep-0691/),
 * a `--find-links` page or directory, and which file of a project an installer would pick for a
 * machine (a version that satisfies the requirement, the best wheel tag).
 * The page parsers are pure functions of the text, bounded, and fuzzed (bench/fuzz-remote.mjs).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { UserError } from "../errors.js";
import { normalizeName } from "../util/package-name.js";
import {
  type Pep440Version,
  isInvalidSpecifier,
  parsePep440Version,
  parseSpecifierSet,
  satisfies,
  selectFromIndex,
} from "../util/pep440.js";
import { printablePrefix } from "../util/safe-read.js";
import { FetchError, statusError, type HttpClient } from "./http.js";
import { parseBoundedJson } from "./json.js";
import { parseWheelName, tagIndex, tagRank, type TargetPlatform, type WheelName } from "./wheel-tags.js";

export interface IndexFile {
  filename: string;
  /** Absolute URL (or a file: URL for a --find-links directory). */
  url: string;
  /** Hashes from the page: PEP 691's "hashes", or PEP 503's #sha256= fragment. */
  hashes: Record<string, string>;
  requiresPython: string | null;
  yanked: boolean;
  size: number | null;
}

const MAX_FILES = 200_000;
const MAX_PAGE = 64 * 1024 * 1024;
const SIMPLE_ACCEPT =
  "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

/** The index's answer was not a page it could read. */
export class IndexPageError extends Error {}

/** Longer links are not links an index serves (and parsing megabyte URLs takes a second each). */
const MAX_URL = 8192;

function resolveUrl(href: string, base: string): string | null {
  if (href.length > MAX_URL || base.length > MAX_URL) return null;
  try {
    const url = new URL(href, base);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "file:"
      ? url.toString()
      : null;
  } catch {
    return null;
  }
}

/** The hash in a URL's fragment ("#sha256=abc"), and the URL without it. */
function splitFragment(url: string): { url: string; hashes: Record<string, string> } {
  const at = url.indexOf("#");
  if (at < 0) return { url, hashes: {} };
  const fragment = /^([a-z0-9]+)=([0-9a-fA-F]+)$/.exec(url.slice(at + 1));
  return {
    url: url.slice(0, at),
    hashes: fragment ? { [fragment[1] as string]: (fragment[2] as string).toLowerCase() } : {},
  };
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code =
        name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const SPACE = /\s/;
/** Character classes by code: the per-character loops below stay linear and cheap on megabyte tags. */
const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isNameStart = (c: number) =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x3a;
const isNameChar = (c: number) => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
/** An unquoted value ends at a space or one of " ' = < > ` */
const endsUnquoted = (c: number) =>
  isSpace(c) || c === 0x22 || c === 0x27 || c === 0x3d || c === 0x3c || c === 0x3e || c === 0x60;

/** A tag's attributes (name -> decoded value; a bare name -> ""), read in one pass. */
function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  const code = (i: number) => tag.charCodeAt(i);
  let at = 0;
  while (at < tag.length) {
    while (at < tag.length && !isNameStart(code(at))) at++;
    const nameStart = at;
    while (at < tag.length && isNameChar(code(at))) at++;
    if (at === nameStart) break;
    const name = tag.slice(nameStart, at).toLowerCase();
    while (at < tag.length && isSpace(code(at))) at++;
    let value = "";
    if (tag[at] === "=") {
      at++;
      while (at < tag.length && isSpace(code(at))) at++;
      const quote = tag[at];
      if (quote === '"' || quote === "'") {
        const close = tag.indexOf(quote, at + 1);
        const stop = close < 0 ? tag.length : close;
        value = tag.slice(at + 1, stop);
        at = stop + 1;
      } else {
        const valueStart = at;
        while (at < tag.length && !endsUnquoted(code(at))) at++;
        value = tag.slice(valueStart, at);
      }
    }
    if (!found.has(name)) found.set(name, decodeEntities(value));
  }
  return found;
}

/** The next `<NAME` tag (followed by a space, "/" or ">") at or after `from` in the lower-cased page, or -1. */
function nextTag(lower: string, name: string, from: number): number {
  for (let at = lower.indexOf(`<${name}`, from); at >= 0; at = lower.indexOf(`<${name}`, at + 1)) {
    const next = lower[at + name.length + 1];
    if (next === undefined || next === ">" || next === "/" || SPACE.test(next)) return at;
  }
  return -1;
}

/**
 * The files a PEP 503 page (or a --find-links HTML page) links: every <a href> with its data-*
 * attributes. One pass over the page (a regex over hostile HTML can take quadratic time).
 */
export function parseSimpleHtml(html: string, pageUrl: string): IndexFile[] {
  if (html.length > MAX_PAGE) throw new IndexPageError(`the page is larger than ${MAX_PAGE} bytes`);
  const lower = html.toLowerCase();
  const baseAt = nextTag(lower, "base", 0);
  const baseEnd = baseAt < 0 ? -1 : lower.indexOf(">", baseAt);
  const base = baseEnd < 0 ? undefined : attributes(html.slice(baseAt + 5, baseEnd)).get("href");
  const baseUrl = (base && resolveUrl(base, pageUrl)) || pageUrl;
  const files: IndexFile[] = [];
  let closeAt = -2; // the next "</a" at or after the current tag; -1 once there is none
  let open = nextTag(lower, "a", 0);
  while (open >= 0) {
    const end = lower.indexOf(">", open);
    if (end < 0) break;
    const following = nextTag(lower, "a", end + 1);
    if (closeAt !== -1 && closeAt < end) closeAt = lower.indexOf("</a", end);
    const textEnd = Math.min(closeAt < 0 ? html.length : closeAt, following < 0 ? html.length : following);
    const file = linkedFile(attributes(html.slice(open + 2, end)), html.slice(end + 1, textEnd), baseUrl);
    if (file) files.push(file);
    if (files.length > MAX_FILES) throw new IndexPageError(`more than ${MAX_FILES} links`);
    open = following;
  }
  return files;
}

/** Text with its tags dropped, in one pass. */
function withoutTags(text: string): string {
  let out = "";
  let at = 0;
  for (let open = text.indexOf("<"); open >= 0; open = text.indexOf("<", at)) {
    out += text.slice(at, open);
    const close = text.indexOf(">", open);
    if (close < 0) return out;
    at = close + 1;
  }
  return out + text.slice(at);
}

function linkedFile(attrs: Map<string, string>, inner: string, baseUrl: string): IndexFile | null {
  const href = attrs.get("href");
  if (!href) return null;
  const absolute = resolveUrl(href, baseUrl);
  if (!absolute) return null;
  const { url, hashes } = splitFragment(absolute);
  const text = decodeEntities(withoutTags(inner)).trim();
  let filename = text;
  if (!filename) {
    try {
      filename = decodeURIComponent(url.split("/").pop() ?? "");
    } catch {
      filename = url.split("/").pop() ?? "";
    }
  }
  return {
    filename,
    url,
    hashes,
    requiresPython: attrs.get("data-requires-python") ?? null,
    yanked: attrs.has("data-yanked"),
    size: null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The files of a PEP 691 project page. */
export function parseSimpleJson(text: string, pageUrl: string): IndexFile[] {
  let json: unknown;
  try {
    json = parseBoundedJson(text, MAX_PAGE);
  } catch (error) {
    throw new IndexPageError((error as Error).message);
  }
  if (!isObject(json) || !isObject(json["meta"]) || !Array.isArray(json["files"]))
    throw new IndexPageError("not a PEP 691 project page (no meta or files)");
  const version = json["meta"]["api-version"];
  if (typeof version !== "string" || !/^1\.\d+$/.test(version))
    throw new IndexPageError(`API version ${printablePrefix(String(version), 20)} is not 1.x`);
  if (json["files"].length > MAX_FILES) throw new IndexPageError(`more than ${MAX_FILES} files`);
  const files: IndexFile[] = [];
  for (const entry of json["files"]) {
    if (!isObject(entry) || typeof entry["filename"] !== "string" || typeof entry["url"] !== "string")
      continue;
    const absolute = resolveUrl(entry["url"], pageUrl);
    if (!absolute) continue;
    const hashes: Record<string, string> = {};
    if (isObject(entry["hashes"]))
      for (const [name, value] of Object.entries(entry["hashes"]))
        if (typeof value === "string" && /^[0-9a-fA-F]+$/.test(value)) hashes[name] = value.toLowerCase();
    const yanked = entry["yanked"];
    files.push({
      filename: entry["filename"],
      url: splitFragment(absolute).url,
      hashes,
      requiresPython: typeof entry["requires-python"] === "string" ? entry["requires-python"] : null,
      yanked: yanked === true || (typeof yanked === "string" && yanked !== ""),
      size: typeof entry["size"] === "number" && Number.isSafeInteger(entry["size"]) ? entry["size"] : null,
    });
  }
  return files;
}

/** A project's files from an index (`https://host/simple`): JSON where the index serves it, else HTML. */
export async function projectFiles(
  client: HttpClient,
  indexUrl: string,
  project: string,
): Promise<IndexFile[]> {
  const page = `${indexUrl.replace(/\/+$/, "")}/${normalizeName(project)}/`;
  const response = await client.fetchBytes(page, { headers: { accept: SIMPLE_ACCEPT }, maxBytes: MAX_PAGE });
  if (response.status === 404) return [];
  if (response.status !== 200) throw statusError(page, response.status, `the project page of ${project}`);
  const type =
    String(response.headers["content-type"] ?? "")
      .split(";")[0]
      ?.trim() ?? "";
  try {
    return type === "application/vnd.pypi.simple.v1+json"
      ? parseSimpleJson(response.body.toString("utf8"), response.url)
      : parseSimpleHtml(response.body.toString("utf8"), response.url);
  } catch (error) {
    if (error instanceof IndexPageError)
      throw new FetchError(`${page}: ${error.message}`, "check that the URL is a simple index");
    throw error;
  }
}

/** The wheels of a --find-links location: a directory's *.whl, or a page's links. */
export async function findLinksFiles(client: HttpClient | null, location: string): Promise<IndexFile[]> {
  if (/^https?:\/\//i.test(location)) {
    if (!client) throw new UserError(`--find-links ${location} needs the network`, "drop --offline");
    const response = await client.fetchBytes(location, {
      headers: { accept: "text/html" },
      maxBytes: MAX_PAGE,
    });
    if (response.status !== 200) throw statusError(location, response.status, "the --find-links page");
    return parseSimpleHtml(response.body.toString("utf8"), response.url);
  }
  let names: string[];
  try {
    names = readdirSync(location);
  } catch {
    throw new UserError(`cannot read the --find-links directory ${location}`, "check the path");
  }
  return names
    .filter((n) => n.endsWith(".whl"))
    .map((filename) => {
      const path = join(location, filename);
      return {
        filename,
        url: pathToFileURL(path).toString(),
        hashes: {},
        requiresPython: null,
        yanked: false,
        size: statSync(path).size,
      };
    });
}

interface PickedFile {
  file: IndexFile;
  wheel: WheelName;
  /** Variant wheels of the same version and tag rank, for the variant choice (PEP 825). */
  variants: { file: IndexFile; wheel: WheelName }[];
}

interface PickOutcome {
  picked: PickedFile | null;
  /** Why nothing was picked, or what was passed over. */
  reason: string | null;
}

/**
 * The wheel an installer picks: the newest version that satisfies `specifier` (pre-releases only
 * when the specifier names one, yanked files only when pinned with ==), then the file whose tags
 * rank best for the machine (packaging.tags order). Non-variant and null-variant wheels compete
 * as usual; variant wheels of the picked version are returned beside it.
 */
export function pickWheel(
  files: IndexFile[],
  project: string,
  specifier: string,
  target: TargetPlatform,
): PickOutcome {
  const wanted = parseSpecifierSet(specifier);
  if (isInvalidSpecifier(wanted)) return { picked: null, reason: wanted.message };
  const supported = tagIndex(target);
  const name = normalizeName(project);
  const installable: { file: IndexFile; wheel: WheelName; version: Pep440Version; rank: number }[] = [];
  let sawProject = false;
  for (const file of files) {
    const wheel = parseWheelName(file.filename);
    if (!wheel || normalizeName(wheel.distribution) !== name) continue;
    sawProject = true;
    const version = parsePep440Version(wheel.version);
    if (version === null) continue;
    if (file.yanked && !/==/.test(specifier)) continue;
    if (file.requiresPython && satisfies(`${target.python}.0`, file.requiresPython) === false) continue;
    const rank = tagRank(wheel, supported);
    if (rank === null) continue;
    installable.push({ file, wheel, version, rank });
  }
  // pip's choice among the versions: packaging's filter, pre-releases only where the specifier
  // names one or nothing else is there (the same code the planner uses, proven against packaging).
  const allowed = new Set(
    selectFromIndex(
      wanted,
      installable.map((c) => c.version),
    ),
  );
  const candidates = installable.filter((c) => allowed.has(c.version));
  if (candidates.length === 0)
    return {
      picked: null,
      reason: sawProject
        ? `no wheel of ${project}${specifier} for Python ${target.python} on ${target.arch} (manylinux glibc ${target.glibc.join(".")})`
        : `${project} has no wheels there`,
    };
  candidates.sort((a, b) => b.version.compare(a.version) || a.rank - b.rank);
  const best = candidates[0]!;
  const sameVersion = candidates.filter((c) => c.version.compare(best.version) === 0);
  const plain = sameVersion.filter((c) => c.wheel.variant === null || c.wheel.variant === "null");
  const chosen = plain.sort((a, b) => a.rank - b.rank)[0] ?? best;
  return {
    picked: {
      file: chosen.file,
      wheel: chosen.wheel,
      variants: sameVersion.filter((c) => c.wheel.variant !== null && c.wheel.variant !== "null"),
    },
    reason: null,
  };
}
