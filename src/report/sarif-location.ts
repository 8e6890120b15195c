/**
 * Where a doctor finding lives, for SARIF. Code-scanning UIs (GitHub's among them) drop a result
 * that has no location, and a doctor finding is about an environment, not a line of code, so:
 *   - a finding whose evidence cites a project manifest ("pyproject.toml:5",
 *     "requirements.txt:3", "install = uv sync (pyproject.toml)") points at that file, and at the
 *     line where the evidence names one: that is the file the fix edits;
 *   - any other finding points at the Python environment it was found in: the venv or conda
 *     prefix (sys.prefix), or for a system or unknown Python the interpreter itself, since "/usr"
 *     says less than "/usr/bin/python3".
 * Paths are absolute file:// URIs: GitHub turns those under the checkout into repository paths and
 * keeps the others as they are (docs cited in github-sarif.test.ts).
 */
import { basename, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { Facts } from "../facts/schema.js";
import type { Finding } from "../findings/types.js";

interface FindingLocation {
  /** Absolute path of the file or directory. */
  path: string;
  /** 1-based; null when the finding names no line (a directory, an interpreter, a whole file). */
  line: number | null;
}

/** The project's manifests by every name evidence may use for them: as read, relative, base name. */
function manifestNames(facts: Facts): Map<string, string> {
  const project = facts.project;
  const names = new Map<string, string>();
  if (!project) return names;
  const paths = [
    project.pyproject?.path,
    ...project.requirementsFiles.map((file) => file.path),
    project.uvLock?.path,
    ...(project.condaManifests ?? []).map((manifest) => manifest.path),
  ].filter((path): path is string => typeof path === "string" && path !== "");
  // Base names last, so "sub/requirements.txt" wins over another directory's requirements.txt.
  for (const path of paths) names.set(path, path);
  for (const path of paths) names.set(relative(project.dir, path), path);
  for (const path of paths) if (!names.has(basename(path))) names.set(basename(path), path);
  return names;
}

/**
 * "requirements.txt:3" -> the file and line 3; "pyproject.toml:project.dependencies" -> the file,
 * at the line of that key (or of the array item `value`) where the snapshot recorded one.
 */
function citedManifest(
  text: string,
  value: string,
  facts: Facts,
  names: Map<string, string>,
): FindingLocation | null {
  const numbered = /^(.+?):(\d+)$/.exec(text);
  const keyed = numbered ? null : /^(.+?):(\S.*)$/.exec(text);
  // "uv sync (pyproject.toml)", "pip install -r requirements-gpu.txt (requirements-gpu.txt)"
  const inParens = /\(([^()]+)\)\s*$/.exec(text);
  const candidates = [numbered?.[1], keyed?.[1], inParens?.[1], text].filter(
    (c): c is string => c !== undefined,
  );
  for (const candidate of candidates) {
    const path = names.get(candidate.trim());
    if (path === undefined) continue;
    if (numbered && candidate === numbered[1]) return { path, line: Number(numbered[2]) || null };
    if (keyed && candidate === keyed[1]) {
      const lines = facts.project?.pyproject?.path === path ? facts.project.pyproject.lines : undefined;
      const key = keyed[2]!;
      const line = lines?.[`${key}[]=${value}`] ?? lines?.[key] ?? null;
      return { path, line: line !== null && line > 0 ? line : null };
    }
    return { path, line: null };
  }
  return null;
}

export function findingLocation(finding: Finding, facts: Facts): FindingLocation {
  const names = manifestNames(facts);
  if (names.size > 0) {
    let fileOnly: FindingLocation | null = null;
    for (const item of finding.evidence) {
      const found =
        citedManifest(item.label, item.value, facts, names) ?? citedManifest(item.value, "", facts, names);
      if (found?.line) return found;
      fileOnly ??= found;
    }
    if (fileOnly) return fileOnly;
  }
  const interpreter = facts.python.interpreter;
  const isEnvironment = ["venv", "uv", "conda"].includes(interpreter.kind) && interpreter.prefix !== "";
  return {
    path: isEnvironment ? interpreter.prefix : interpreter.executable || facts.target.python,
    line: null,
  };
}

export function fileUri(path: string): string {
  return pathToFileURL(path).href;
}
