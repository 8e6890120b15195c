/**
 * The project's manifests: pyproject.toml (PEP 621, PEP 735 dependency groups, [tool.uv]),
 * requirements*.txt (with -r / -c includes and index options), uv.lock, pixi.toml and a conda
 * environment.yml (parsed in pixi.ts / conda-env.ts), as ProjectFacts.
 * Reads only, through util/safe-read (regular files, capped); -r / -c includes must stay inside the
 * project. A malformed file is a UserError naming the file and line, quoting at most a short
 * sanitized prefix of what it could not parse.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { ProjectFacts, Requirement } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { READ_LIMITS, isInside, printablePrefix, readTextFile } from "../util/safe-read.js";
import { normalizeName, parseRequirement } from "./requirement.js";
import { readCondaManifests } from "./conda-manifests.js";
import { manifestFiles } from "./project-files.js";

export { hasProjectManifest } from "./project-files.js";
import { tomlKeyLines } from "./toml-lines.js";
import { parseTomlManifest } from "./toml-parse.js";

type RequirementsFile = ProjectFacts["requirementsFiles"][number];
type Pyproject = NonNullable<ProjectFacts["pyproject"]>;
type Table = Record<string, unknown>;

export function readProject(dirArg: string): ProjectFacts {
  const dir = resolve(dirArg);
  if (!existsSync(dir))
    throw new UserError(`project directory ${dirArg} does not exist`, "pass an existing directory");
  const files = manifestFiles(dir);
  const pyprojectPath = join(dir, "pyproject.toml");
  const lockPath = join(dir, "uv.lock");
  const requirementsFiles: RequirementsFile[] = [];
  const visited = new Set<string>();
  for (const name of files.filter((n) => n.endsWith(".txt"))) {
    readRequirementsFile(join(dir, name), dir, visited, requirementsFiles);
  }
  return {
    dir,
    pyproject: existsSync(pyprojectPath) ? readPyproject(pyprojectPath) : null,
    requirementsFiles,
    uvLock: existsSync(lockPath) ? readUvLock(lockPath) : null,
    condaManifests: readCondaManifests(dir, (path) =>
      /\.ya?ml$/.test(path) ? readText(path, YAML_LIMITS.bytes, YAML_LIMITS.line) : readText(path),
    ),
  };
}

const OUTSIDE_HINT =
  "gpuprep reads -r / -c includes only inside the project directory; copy the file into the project";

/** A requirement line longer than this is no requirement (a pip-compile line with 200 hashes is ~17 KB). */
export const MAX_REQUIREMENT_LINE = 64 * 1024;

/**
 * A manifest's text. Lines are capped as well as files: the TOML and YAML parsers (and the line
 * scanners here) slow down more than linearly on one enormous line (1 MB: 7 s in smol-toml, 14 s
 * in yaml), and no manifest a person or a tool writes has a line near 64 KiB.
 */
/**
 * environment.yml is held tighter: the yaml parser is superlinear on hostile flow and plain
 * scalars (a 3.6 MB file of "a: a: …" took 30 s; 1 MB of long plain lines ran it out of memory),
 * while a real conda environment file is a few KB of short lines. Within these caps the worst
 * input found takes about 3 s.
 */
const YAML_LIMITS = { bytes: 256 * 1024, line: 4096 };

function readText(
  path: string,
  maxBytes: number = READ_LIMITS.manifest,
  maxLine: number = MAX_REQUIREMENT_LINE,
): string {
  const text = readTextFile(path, {
    maxBytes,
    hint: "gpuprep reads manifests that are regular files of a sane size",
  });
  let start = 0;
  for (let line = 1; ; line++) {
    const end = text.indexOf("\n", start);
    const length = (end < 0 ? text.length : end) - start;
    if (length > maxLine)
      throw new UserError(
        `${path}:${line}: line of ${length} characters, longer than gpuprep reads (${maxLine})`,
        `fix line ${line} of ${basename(path)}`,
      );
    if (end < 0) return text;
    start = end + 1;
  }
}

function readToml(path: string, maxBytes?: number): Table {
  return parseTomlManifest(readText(path, maxBytes), path);
}

// ------------------------------------------------------------------ pyproject.toml

function readPyproject(path: string): Pyproject {
  const doc = readToml(path);
  const project = table(doc["project"], path, "project");
  const tool = table(doc["tool"], path, "tool");
  const uv = table(tool["uv"], path, "tool.uv");
  const groups: Record<string, Requirement[]> = {};
  for (const [group, items] of Object.entries(table(doc["dependency-groups"], path, "dependency-groups"))) {
    // PEP 735: entries are strings or {include-group = "..."} tables (kept out: they repeat other groups).
    const strings = Array.isArray(items) ? items.filter((i): i is string => typeof i === "string") : [];
    groups[group] = requirementList(strings, path, `dependency-groups.${group}`);
  }
  const optional: Record<string, Requirement[]> = {};
  for (const [extra, items] of Object.entries(
    table(project["optional-dependencies"], path, "project.optional-dependencies"),
  )) {
    optional[extra] = requirementList(items, path, `project.optional-dependencies.${extra}`);
  }
  const indexes = Array.isArray(uv["index"]) ? (uv["index"] as unknown[]) : [];
  return {
    path,
    name: typeof project["name"] === "string" ? project["name"] : null,
    requiresPython: typeof project["requires-python"] === "string" ? project["requires-python"] : null,
    dependencies: requirementList(project["dependencies"], path, "project.dependencies"),
    optionalDependencies: optional,
    dependencyGroups: groups,
    uv: {
      // Plain JSON objects (smol-toml builds null-prototype tables), as a snapshot stores them.
      sources: JSON.parse(JSON.stringify(table(uv["sources"], path, "tool.uv.sources"))) as Table,
      indexes: indexes.map((entry, i) => {
        const index = table(entry, path, `tool.uv.index[${i}]`);
        if (typeof index["url"] !== "string") {
          throw new UserError(
            `${path}: [[tool.uv.index]] entry ${i + 1} has no url`,
            'give every [[tool.uv.index]] a url = "..."',
          );
        }
        return {
          name: typeof index["name"] === "string" ? index["name"] : null,
          url: index["url"],
          explicit: index["explicit"] === true,
        };
      }),
      constraintDependencies: requirementList(
        uv["constraint-dependencies"],
        path,
        "tool.uv.constraint-dependencies",
      ),
      overrideDependencies: requirementList(
        uv["override-dependencies"],
        path,
        "tool.uv.override-dependencies",
      ),
    },
    lines: tomlKeyLines(readText(path)),
  };
}

function table(value: unknown, path: string, key: string): Table {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UserError(`${path}: ${key} must be a table`, `fix [${key}] in ${basename(path)}`);
  }
  return value as Table;
}

function requirementList(value: unknown, path: string, key: string): Requirement[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new UserError(`${path}: ${key} must be a list of strings`, `fix ${key} in ${basename(path)}`);
  return value.map((item) => {
    const parsed = typeof item === "string" ? parseRequirement(item, `pyproject.toml:${key}`) : null;
    if (!parsed) {
      throw new UserError(
        `${path}: ${key} has an invalid requirement ${printablePrefix(JSON.stringify(item) ?? String(item))}`,
        'write it as PEP 508: name[extras] specifier ; marker (e.g. "torch==2.5.1")',
      );
    }
    return parsed;
  });
}

// ------------------------------------------------------------------ requirements*.txt

/** One requirements file being read: its entry, and the files it includes (each listed once). */
interface FileReading {
  /** The file's real path. */
  real: string;
  /** Its path relative to the project, for origins. */
  label: string;
  entry: RequirementsFile;
  // Sets: each include is checked (two stats, two realpaths) and listed once, however often it is
  // written. 4 MiB of one repeated `-r b.txt` line cost 10 s of CPU when every copy was checked.
  includes: Set<string>;
  constraints: Set<string>;
}

/** `-e .` / `-e ./lib`: a local project; its name is not known without building it. */
function editableRequirement(target: string, text: string, origin: string, dir: string): Requirement {
  return (
    parseRequirement(target, origin) ?? {
      name: basename(resolve(dir, target)),
      normalizedName: normalizeName(basename(resolve(dir, target))),
      specifier: "",
      extras: [],
      marker: null,
      url: target,
      raw: text,
      origin,
    }
  );
}

/** A pip option line: includes, constraints, index URLs and editables are taken; the rest changes no pin. */
function readOptionLine(reading: FileReading, flag: string, value: string, text: string, line: number): void {
  const { real, entry } = reading;
  const need = () => {
    if (!value)
      throw new UserError(`${real}:${line}: ${flag} needs a value`, `fix line ${line} of ${basename(real)}`);
    return value.trim();
  };
  if (flag === "-r" || flag === "--requirement") reading.includes.add(resolve(dirname(real), need()));
  else if (flag === "-c" || flag === "--constraint") {
    const constraint = resolve(dirname(real), need());
    if (!reading.constraints.has(constraint)) entry.constraintFiles.push(constraint);
    reading.constraints.add(constraint);
    reading.includes.add(constraint);
  } else if (flag === "-i" || flag === "--index-url") entry.indexUrls.push(need());
  else if (flag === "--extra-index-url") entry.extraIndexUrls.push(need());
  else if (flag === "-e" || flag === "--editable")
    entry.requirements.push(editableRequirement(need(), text, `${reading.label}:${line}`, dirname(real)));
  // Other options (--find-links, --pre, --no-binary, --hash ...) do not change what gets pinned.
}

function readLine(reading: FileReading, text: string, line: number): void {
  const where = `${reading.real}:${line}`;
  if (text.length > MAX_REQUIREMENT_LINE)
    throw new UserError(
      `${where}: line of ${text.length} characters, longer than any requirement`,
      `fix line ${line} of ${basename(reading.real)}`,
    );
  const option = /^(-[a-zA-Z]|--[a-z-]+)(?:\s*=\s*|\s+)?(.*)$/.exec(text);
  if (option) {
    const [, flag = "", value = ""] = option;
    readOptionLine(reading, flag, value, text, line);
    return;
  }
  // `\s--hash`, not `\s+--hash`: the latter rescans a long run of spaces from every position.
  const requirement = parseRequirement(text.replace(/\s--hash[= ]\S+/g, ""), `${reading.label}:${line}`);
  if (!requirement) {
    throw new UserError(
      `${where}: not a valid requirement: ${printablePrefix(text)}`,
      "write it as PEP 508 (name[extras] specifier ; marker) or a pip option such as -r FILE",
    );
  }
  reading.entry.requirements.push(requirement);
}

/** An included file must exist and lie inside the project. */
function checkInclude(real: string, include: string, projectDir: string): void {
  // Never read a file outside the project: `-r /proc/self/environ` would print the
  // environment in the parse error, `-c /etc/shadow` a password hash.
  if (existsSync(include) && !isInside(projectDir, include)) {
    throw new UserError(
      `${real}: includes ${includeText(projectDir, include)}, which lies outside the project`,
      OUTSIDE_HINT,
    );
  }
  if (!existsSync(include)) {
    throw new UserError(
      `${real}: includes ${includeText(projectDir, include)}, which does not exist`,
      `fix the -r / -c line in ${basename(real)}`,
    );
  }
}

function readRequirementsFile(
  path: string,
  projectDir: string,
  visited: Set<string>,
  out: RequirementsFile[],
): void {
  const real = resolve(path);
  if (visited.has(real)) return;
  if (!isInside(projectDir, real)) {
    throw new UserError(
      `${printablePrefix(real, 200)}: requirements file outside the project (a link leads out of it)`,
      OUTSIDE_HINT,
    );
  }
  visited.add(real);
  const entry: RequirementsFile = {
    path: real,
    requirements: [],
    indexUrls: [],
    extraIndexUrls: [],
    constraintFiles: [],
  };
  out.push(entry);
  const reading: FileReading = {
    real,
    label: relative(projectDir, real) || basename(real),
    entry,
    includes: new Set(),
    constraints: new Set(),
  };
  for (const { text, line } of logicalLines(readText(real))) readLine(reading, text, line);
  for (const include of reading.includes) {
    checkInclude(real, include, projectDir);
    readRequirementsFile(include, projectDir, visited, out);
  }
}

function includeText(projectDir: string, include: string): string {
  return printablePrefix(relative(projectDir, include) || include, 80);
}

/** Joins backslash continuations and drops comments (pip: "#" at line start or after whitespace). */
function logicalLines(text: string): { text: string; line: number }[] {
  const lines = text.split(/\r?\n/);
  const result: { text: string; line: number }[] = [];
  let buffer = "";
  let start = 0;
  lines.forEach((raw, i) => {
    if (buffer === "") start = i + 1;
    // Cut at the comment by index: a `.*$` pattern rescans the rest of the line from every " #".
    const comment = /(?:^|\s)#/.exec(raw);
    const content = comment ? raw.slice(0, comment.index) : raw;
    if (content.endsWith("\\")) {
      buffer += content.slice(0, -1) + " ";
      return;
    }
    const joined = (buffer + content).trim();
    buffer = "";
    if (joined) result.push({ text: joined, line: start });
  });
  if (buffer.trim()) result.push({ text: buffer.trim(), line: start });
  return result;
}

// ------------------------------------------------------------------ uv.lock

function readUvLock(path: string): NonNullable<ProjectFacts["uvLock"]> {
  const doc = readToml(path, READ_LIMITS.lockfile);
  const packages = Array.isArray(doc["package"]) ? (doc["package"] as unknown[]) : [];
  return {
    path,
    packages: packages.map((item, i) => {
      const pkg = table(item, path, `package[${i}]`);
      if (typeof pkg["name"] !== "string") {
        throw new UserError(
          `${path}: [[package]] entry ${i + 1} has no name`,
          "regenerate it with `uv lock`",
        );
      }
      return {
        name: pkg["name"],
        version: typeof pkg["version"] === "string" ? pkg["version"] : null,
        source: sourceText(pkg["source"]),
      };
    }),
  };
}

/**
 * uv.lock's `source = { registry = "https://..." }` as "registry+https://...". uv writes a string
 * in every form (registry, git, url, path, directory, editable, virtual); anything else is not a
 * source we can name (a table there ended doctor in "internal error": String() of a null-prototype
 * TOML table throws).
 */
function sourceText(source: unknown): string | null {
  if (typeof source !== "object" || source === null) return null;
  const [kind, value] = Object.entries(source as Table)[0] ?? [];
  return kind === undefined || typeof value !== "string" ? null : `${kind}+${value}`;
}
