/**
 * A pixi workspace (pixi.toml, or [tool.pixi] in pyproject.toml) as a CondaManifest: channels,
 * platforms, [system-requirements] cuda, conda and PyPI dependencies per feature and target
 * platform, [environments], and the line of each key. Reads text; the caller reads the file.
 * Manifest format: https://pixi.sh/latest/reference/pixi_manifest/ .
 */
import { basename } from "node:path";
import type { CondaDependency, CondaManifest, CondaPypiDependency } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { printablePrefix } from "../util/safe-read.js";
import { normalizeCondaVersion } from "./conda-spec.js";
import { parseRequirement } from "./requirement.js";
import { tomlKeyLines, type TomlLines } from "./toml-lines.js";
import { parseTomlManifest } from "./toml-parse.js";

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "https://prefix.dev/conda-forge/" -> "conda-forge"; a name stays as written. */
export function channelName(channel: string): string {
  const trimmed = channel.trim().replace(/\/+$/, "");
  if (!/^[a-z]+:\/\//.test(trimmed)) return trimmed;
  return trimmed.split("/").pop() ?? trimmed;
}

function stringList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((item) =>
      typeof item === "string"
        ? item
        : isTable(item) && typeof item["channel"] === "string"
          ? item["channel"]
          : null,
    )
    .filter((item): item is string => item !== null);
}

interface Context {
  path: string;
  file: string;
  prefix: string;
  lines: TomlLines;
}

/** "pixi.toml:14" for a key path, or the nearest parent key that has a line. */
function origin(ctx: Context, key: string[]): string {
  const full = [...(ctx.prefix ? [ctx.prefix] : []), ...key];
  for (let n = full.length; n > 0; n--) {
    const line = ctx.lines[full.slice(0, n).join(".")];
    if (line !== undefined) return `${ctx.file}:${line}`;
  }
  return `${ctx.file}:${full.join(".")}`;
}

/** One dependency table: its key path, the feature it belongs to, and its target platform (null: every one). */
interface DependencyTable {
  ctx: Context;
  key: string[];
  feature: string;
  platform: string | null;
}

function condaDependency(
  { ctx, key, feature, platform }: DependencyTable,
  name: string,
  value: unknown,
): CondaDependency {
  const where = origin(ctx, [...key, name]);
  if (typeof value === "string")
    return {
      name,
      channel: null,
      ...splitVersionBuild(value),
      raw: `${name} = "${value}"`,
      origin: where,
      feature,
      platform,
    };
  if (isTable(value)) {
    const version = typeof value["version"] === "string" ? normalizeCondaVersion(value["version"]) : "";
    return {
      name,
      channel: typeof value["channel"] === "string" ? channelName(value["channel"]) : null,
      version,
      build: typeof value["build"] === "string" ? value["build"] : null,
      raw: `${name} = ${JSON.stringify(value)}`,
      origin: where,
      feature,
      platform,
    };
  }
  throw new UserError(
    `${ctx.path}: ${[...key, name].join(".")} must be a version string or a table`,
    `write it as ${name} = ">=1.0" or ${name} = { version = ">=1.0", channel = "conda-forge" }`,
  );
}

/** pixi accepts "2.5.1 cuda126*" (version, then build) as a string value. */
function splitVersionBuild(value: string): { version: string; build: string | null } {
  const [version = "", build] = value.trim().split(/\s+/);
  return { version: normalizeCondaVersion(version), build: build ?? null };
}

function pypiDependency(
  { ctx, key, feature, platform }: DependencyTable,
  name: string,
  value: unknown,
): CondaPypiDependency | null {
  const where = origin(ctx, [...key, name]);
  let text: string;
  let index: string | null = null;
  if (typeof value === "string")
    text = value === "*" ? name : /^[<>=!~]/.test(value) ? `${name}${value}` : `${name}==${value}`;
  else if (isTable(value)) {
    if (typeof value["path"] === "string" || typeof value["git"] === "string") return null; // local or VCS source
    const extras = Array.isArray(value["extras"]) ? `[${value["extras"].join(",")}]` : "";
    if (typeof value["url"] === "string") text = `${name}${extras} @ ${value["url"]}`;
    else {
      const version =
        typeof value["version"] === "string" && value["version"] !== "*" ? value["version"] : "";
      text = `${name}${extras}${version && !/^[<>=!~]/.test(version) ? `==${version}` : version}`;
    }
    index = typeof value["index"] === "string" ? value["index"] : null;
  } else {
    throw new UserError(
      `${ctx.path}: ${[...key, name].join(".")} must be a version string or a table`,
      `write it as ${name} = ">=1.0" or ${name} = { version = ">=1.0", index = "https://..." }`,
    );
  }
  const requirement = parseRequirement(text, where);
  if (!requirement)
    throw new UserError(
      `${where}: ${printablePrefix(name)} has an invalid PyPI requirement (${printablePrefix(text)})`,
      'write the version as PEP 440, e.g. ">=2.5,<3"',
    );
  return { ...requirement, index, feature, platform };
}

/** Dependencies of one table that may hold [dependencies], [pypi-dependencies] and [target.*]. */
function readDependencyTables(
  ctx: Context,
  table: Table,
  key: string[],
  feature: string,
  out: { conda: CondaDependency[]; pypi: CondaPypiDependency[] },
  platform: string | null = null,
): void {
  const at = (name: string): DependencyTable => ({ ctx, key: [...key, name], feature, platform });
  const conda = table["dependencies"];
  if (isTable(conda))
    for (const [name, value] of Object.entries(conda))
      out.conda.push(condaDependency(at("dependencies"), name, value));
  const pypi = table["pypi-dependencies"];
  if (isTable(pypi))
    for (const [name, value] of Object.entries(pypi)) {
      const dep = pypiDependency(at("pypi-dependencies"), name, value);
      if (dep) out.pypi.push(dep);
    }
  const targets = table["target"];
  if (platform === null && isTable(targets))
    for (const [target, body] of Object.entries(targets))
      if (isTable(body)) readDependencyTables(ctx, body, [...key, "target", target], feature, out, target);
}

function cudaRequirement(table: unknown): string | null {
  if (!isTable(table)) return null;
  const cuda = table["cuda"];
  return typeof cuda === "string" ? cuda : typeof cuda === "number" ? String(cuda) : null;
}

/**
 * Parses a pixi manifest. `prefix` is "tool.pixi" for a pyproject.toml; returns null there when
 * the file has no [tool.pixi] table.
 */
export function parsePixiManifest(text: string, path: string, prefix = ""): CondaManifest | null {
  let root: unknown = parseTomlManifest(text, path);
  for (const part of prefix ? prefix.split(".") : []) root = isTable(root) ? root[part] : undefined;
  if (!isTable(root)) return null;
  const ctx: Context = { path, file: basename(path), prefix, lines: tomlKeyLines(text) };
  const workspace = isTable(root["workspace"])
    ? root["workspace"]
    : isTable(root["project"])
      ? root["project"]
      : {};
  const workspaceKey = isTable(root["workspace"]) ? "workspace" : "project";
  const out = { conda: [] as CondaDependency[], pypi: [] as CondaPypiDependency[] };
  readDependencyTables(ctx, root, [], "default", out);
  const systemCuda: Record<string, string> = {};
  const defaultCuda = cudaRequirement(root["system-requirements"]);
  if (defaultCuda) systemCuda["default"] = defaultCuda;
  const features = isTable(root["feature"]) ? root["feature"] : {};
  for (const [feature, body] of Object.entries(features)) {
    if (!isTable(body)) continue;
    readDependencyTables(ctx, body, ["feature", feature], feature, out);
    const cuda = cudaRequirement(body["system-requirements"]);
    if (cuda) systemCuda[feature] = cuda;
  }
  const environments: Record<string, string[]> = {};
  const envTable = isTable(root["environments"]) ? root["environments"] : {};
  for (const [env, body] of Object.entries(envTable)) {
    if (Array.isArray(body)) environments[env] = stringList(body);
    else if (isTable(body)) environments[env] = stringList(body["features"]);
  }
  const pypiOptions = isTable(root["pypi-options"]) ? root["pypi-options"] : {};
  const lines: Record<string, number> = {};
  const lineOf = (key: string) => ctx.lines[[...(prefix ? [prefix] : []), key].join(".")];
  for (const [name, key] of [
    ["channels", `${workspaceKey}.channels`],
    ["platforms", `${workspaceKey}.platforms`],
    ["system-requirements", "system-requirements"],
    ["system-requirements.cuda", "system-requirements.cuda"],
    ["dependencies", "dependencies"],
    ["pypi-dependencies", "pypi-dependencies"],
  ] as const) {
    const line = lineOf(key);
    if (line !== undefined) lines[name] = line;
  }
  return {
    kind: "pixi",
    path,
    name: typeof workspace["name"] === "string" ? workspace["name"] : null,
    channels: stringList(workspace["channels"]).map(channelName),
    platforms: stringList(workspace["platforms"]),
    systemCuda,
    environments,
    dependencies: out.conda,
    pypiDependencies: out.pypi,
    pypiIndexUrl: typeof pypiOptions["index-url"] === "string" ? pypiOptions["index-url"] : null,
    pypiExtraIndexUrls: stringList(pypiOptions["extra-index-urls"]),
    lines,
  };
}
