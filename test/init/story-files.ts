/**
 * Readers for stories.test.ts: what `gpuprep init` wrote (requirements, Dockerfile stages,
 * .dockerignore, pyproject and pixi routes), judged with oracles that are not the planner's code:
 * Docker's own .dockerignore rules, PEP 503 names, and the knowledge base's sourced tables
 * (src/kb/data: which archs a torch build carries, what an NGC image ships).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./helpers.js";

/** PEP 503: the name pip and uv compare. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

export interface Requirement {
  name: string;
  /** The specifier with blanks removed ("==2.7.1", ">=1.19,<2"), or "@ URL". */
  spec: string;
  raw: string;
}

/** A PEP 508 line's name and specifier (extras and markers dropped: the stories have none). */
export function parseRequirement(line: string): Requirement | null {
  const text = line.split(";")[0]!.trim();
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$/.exec(text);
  if (!match || text.startsWith("-")) return null;
  return { name: normalizeName(match[1]!), spec: match[2]!.replace(/\s+/g, ""), raw: line.trim() };
}

export interface RequirementsFile {
  requirements: Requirement[];
  /** Comment lines, without the leading #: where a plan says what it left out and why. */
  comments: string[];
}

export function readRequirementsFile(path: string): RequirementsFile {
  const lines = readFileSync(path, "utf8").split("\n");
  const comments = lines.filter((l) => l.trim().startsWith("#")).map((l) => l.trim().slice(1).trim());
  const requirements = lines
    .filter((l) => l.trim() !== "" && !l.trim().startsWith("#"))
    .map(parseRequirement)
    .filter((r): r is Requirement => r !== null);
  return { requirements, comments };
}

export interface Stage {
  name: string | null;
  from: string;
  /** ENV in force in the stage (inherited from the stage it is built FROM). */
  env: Map<string, string>;
  runs: string[];
}

/** A Dockerfile's stages, with line continuations joined and ARG defaults substituted into FROM. */
export function readDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword, ...rest] = line.trim().split(/\s+/);
    const body = rest.join(" ");
    const stage = stages.at(-1);
    if (keyword === "ARG" && !stage) {
      const [name, value] = body.split("=");
      if (name && value !== undefined) args.set(name, value);
    } else if (keyword === "FROM") {
      const [image, , name] = body.split(/\s+/);
      const from = (image ?? "").replace(/\$\{(\w+)\}/g, (_, arg: string) => args.get(arg) ?? "");
      const parent = stages.find((s) => s.name === from);
      stages.push({ name: name ?? null, from, env: new Map(parent?.env), runs: [] });
    } else if (keyword === "ENV" && stage) {
      for (const [, name, value] of body.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g))
        stage.env.set(name!, value!.replace(/^"|"$/g, ""));
    } else if (keyword === "RUN" && stage) stage.runs.push(body);
  }
  return stages;
}

/** The NGC tag of the image a Dockerfile builds FROM first ("25.11"), or null. */
export function ngcTag(stages: Stage[]): string | null {
  const match = /^nvcr\.io\/nvidia\/pytorch:(\d\d\.\d\d)-py3(?:-igpu)?$/.exec(stages[0]?.from ?? "");
  return match ? match[1]! : null;
}

/** One .dockerignore pattern as moby's patternmatcher compiles it: `*` and `?` stop at `/`, `**` does not. */
function patternRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      const slash = pattern[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "\\" && i + 1 < pattern.length) out += `\\${pattern[++i]}`;
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether Docker leaves `path` (relative to the context) out of the build context: the patterns
 * in order, the last one that matches the path or a parent directory of it decides, `!` keeps.
 * (moby/patternmatcher MatchesOrParentMatches, which BuildKit's context transfer uses.)
 */
export function dockerignoreExcludes(dockerignore: string, path: string): boolean {
  const patterns = dockerignore
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const parts = path.split("/");
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let excluded = false;
  for (const line of patterns) {
    const keep = line.startsWith("!");
    const pattern = (keep ? line.slice(1) : line).replace(/^\/+/, "").replace(/\/+$/, "");
    const regexp = patternRegExp(pattern);
    if (candidates.some((c) => regexp.test(c))) excluded = !keep;
  }
  return excluded;
}

/** Dotted release numbers compared numerically ("2.10" > "2.9"). */
export function compareRelease(a: string, b: string): number {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether a release version satisfies a comma-joined specifier of release numbers (==, !=, >=,
 * <=, >, <, ~= and X.Y.* prefixes; a bare version as conda reads it, a prefix). Enough for the
 * specifiers the stories and their plans write; pre-releases and local versions are not needed here.
 */
export function satisfies(version: string, spec: string): boolean {
  return spec
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "" && c !== "*")
    .every((clause) => {
      const [, op = "", v = ""] = /^(===|==|!=|>=|<=|~=|>|<|=)?\s*(.+)$/.exec(clause) ?? [];
      const prefix = v.endsWith(".*") ? v.slice(0, -2) : null;
      const inPrefix = (p: string) => version === p || version.startsWith(`${p}.`);
      if (prefix !== null) return op === "!=" ? !inPrefix(prefix) : inPrefix(prefix);
      const d = compareRelease(version, v);
      if (op === "" || op === "=") return inPrefix(v);
      if (op === "==" || op === "===") return d === 0;
      if (op === "!=") return d !== 0;
      if (op === ">=") return d >= 0;
      if (op === "<=") return d <= 0;
      if (op === ">") return d > 0;
      if (op === "<") return d < 0;
      const upper = v.split(".").slice(0, -1).join("."); // ~=X.Y.Z: >=X.Y.Z, ==X.Y.*
      return d >= 0 && inPrefix(upper);
    });
}

const kbData = (table: string) =>
  (
    JSON.parse(readFileSync(join(repoRoot, "src", "kb", "data", `${table}.json`), "utf8")) as {
      rows: unknown[];
    }
  ).rows;

export interface WheelBuild {
  torch: string;
  variant: string;
  platform: string;
  archList: string[];
  pythons: string[];
}

/** The knowledge base's PyTorch wheel builds (torch-builds.json, each row sourced there). */
export function wheelBuilds(): WheelBuild[] {
  return kbData("torch-builds") as WheelBuild[];
}

export interface CondaBuild {
  channel: string;
  torch: string;
  versions: string[];
  cuda: string;
  platform: string;
  archList: string[];
}

/** The knowledge base's conda-forge pytorch builds (conda-torch-builds.json, each row sourced there). */
export function condaBuilds(): CondaBuild[] {
  return kbData("conda-torch-builds") as CondaBuild[];
}

export interface NgcImage {
  tag: string;
  torch: string;
  platforms: { amd64: boolean | null; arm64: boolean | null };
}

/** The knowledge base's NGC PyTorch images (ngc-images.json). */
export function ngcImage(tag: string): NgcImage | undefined {
  return (kbData("ngc-images") as NgcImage[]).find((row) => row.tag === tag);
}

/**
 * SASS for the GPU: "a cubin object generated for compute capability X.y will only execute on devices
 * of compute capability X.z where z >= y" (CUDA C++ Programming Guide, Binary Compatibility), so
 * sm_120 code runs on 12.0 and 12.1, sm_121 code on 12.1 only.
 */
export function hasSassFor(archList: string[], computeCapability: "12.0" | "12.1"): boolean {
  return archList.includes("sm_120") || (computeCapability === "12.1" && archList.includes("sm_121"));
}

/** The PyTorch index variant in an index URL (".../whl/cu130" -> "cu130"), or null. */
export function indexVariant(url: string): string | null {
  return /download\.pytorch\.org\/whl\/(?:nightly\/|test\/)?(cu\d+|cpu)\/?$/.exec(url)?.[1] ?? null;
}
