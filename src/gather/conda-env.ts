/**
 * A conda environment file (environment.yml) as a CondaManifest: channels in priority order,
 * conda MatchSpecs with their lines, and the `pip:` list (requirements and --index-url /
 * --extra-index-url lines). Reads text; the caller reads the file.
 */
import { basename } from "node:path";
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from "yaml";
import type { CondaDependency, CondaManifest, CondaPypiDependency } from "../facts/schema.js";
import { UserError, errorMessage } from "../errors.js";
import { printablePrefix } from "../util/safe-read.js";
import { parseCondaSpec } from "./conda-spec.js";
import { channelName } from "./pixi.js";
import { parseRequirement } from "./requirement.js";

/**
 * The yaml parser recurses per nesting level of flow collections: 256 KiB of "[" takes seconds
 * and overflows its stack. Conda files nest a level or two; deeper is refused before parsing.
 * (Counted without regard to quotes: a quoted "[" only makes the bound stricter.)
 */
const MAX_FLOW_DEPTH = 32;
/** Many flat flow collections with errors cost it as much ("[]" x 128k: 14 s); real files have a few. */
const MAX_FLOW_OPENERS = 2048;

function checkFlowDepth(text: string, path: string): void {
  let depth = 0;
  let line = 1;
  let openers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    else if (c === 91 || c === 123) {
      if (++openers > MAX_FLOW_OPENERS)
        throw new UserError(
          `${path}:${line}: more than ${MAX_FLOW_OPENERS} [ and { in a conda environment file`,
          `write ${basename(path)} in block style (one "- package" per line)`,
        );
      if (++depth > MAX_FLOW_DEPTH)
        throw new UserError(
          `${path}:${line}: [ and { nested more than ${MAX_FLOW_DEPTH} deep`,
          `fix line ${line} of ${basename(path)}`,
        );
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
}

/** The parsed document; a file the YAML parser refuses is a UserError at its first error's line. */
function parseYaml(text: string, path: string, lineCounter: LineCounter) {
  const file = basename(path);
  checkFlowDepth(text, path);
  let doc;
  try {
    doc = parseDocument(text, { lineCounter, prettyErrors: false });
  } catch (error) {
    // Deep nesting overflows the parser's stack (RangeError): the file's fault, not gpuprep's.
    throw new UserError(`${path}: invalid YAML: ${printablePrefix(errorMessage(error))}`, `fix ${file}`);
  }
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    const line = lineCounter.linePos(error.pos[0]).line;
    throw new UserError(
      `${path}:${line}: invalid YAML: ${printablePrefix(error.message.split("\n")[0] ?? "", 120)}`,
      `fix line ${line} of ${file}`,
    );
  }
  return doc;
}

type LineOf = (node: Node | null | undefined) => number | null;

/** What the dependencies list says: conda specs, and the pip: list's requirements and index options. */
interface DependencyLists {
  dependencies: CondaDependency[];
  pypiDependencies: CondaPypiDependency[];
  pypiIndexUrl: string | null;
  pypiExtraIndexUrls: string[];
}

function condaDependency(raw: string, line: number | null, path: string): CondaDependency {
  const spec = parseCondaSpec(raw);
  if (!spec)
    throw new UserError(
      `${path}:${line}: not a conda package spec: ${printablePrefix(String(raw))}`,
      "write it as name, name=1.2 or channel::name>=1.2",
    );
  return { ...spec, raw, origin: `${basename(path)}:${line ?? "?"}`, feature: null, platform: null };
}

/** One entry of the pip: list into `lists`: an index option, a requirement, or another option (skipped). */
function readPipEntry(raw: string, at: string, lists: DependencyLists): void {
  const option =
    /^(--index-url|-i|--extra-index-url|-e|--editable|-r|--requirement|-c|--constraint|--[a-z-]+)(?:\s*=\s*|\s+)?(.*)$/.exec(
      raw,
    );
  if (option) {
    const [, flag = "", value = ""] = option;
    if (flag === "--index-url" || flag === "-i") lists.pypiIndexUrl = value.trim();
    else if (flag === "--extra-index-url") lists.pypiExtraIndexUrls.push(value.trim());
    // -e . (the project itself), -r / -c files and other pip options name no package here.
    return;
  }
  const requirement = parseRequirement(raw, at);
  if (!requirement)
    throw new UserError(
      `${at}: not a valid pip requirement: ${printablePrefix(String(raw))}`,
      "write it as PEP 508, e.g. transformers>=4.40",
    );
  lists.pypiDependencies.push({ ...requirement, index: null, feature: null, platform: null });
}

function readDependencies(items: unknown[], path: string, lineOf: LineOf): DependencyLists {
  const file = basename(path);
  const lists: DependencyLists = {
    dependencies: [],
    pypiDependencies: [],
    pypiIndexUrl: null,
    pypiExtraIndexUrls: [],
  };
  for (const item of items) {
    if (isScalar(item)) {
      lists.dependencies.push(condaDependency(String(item.value), lineOf(item), path));
      continue;
    }
    if (!isMap(item) || !item.has("pip")) continue;
    const pip = item.get("pip", true);
    if (!isSeq(pip)) continue;
    for (const entry of pip.items)
      if (isScalar(entry)) readPipEntry(String(entry.value).trim(), `${file}:${lineOf(entry) ?? "?"}`, lists);
  }
  return lists;
}

export function parseCondaEnvironment(text: string, path: string): CondaManifest {
  const file = basename(path);
  const lineCounter = new LineCounter();
  const root = parseYaml(text, path, lineCounter).contents;
  const lineOf: LineOf = (node) => (node?.range ? lineCounter.linePos(node.range[0]).line : null);
  if (root !== null && !isMap(root))
    throw new UserError(
      `${path}: not a conda environment file (no mapping at the top)`,
      "it needs name:, channels: and dependencies:",
    );
  const get = (key: string) => (root ? (root.get(key, true) as Node | undefined) : undefined);
  /** The line of a top-level key ("channels:"), not of its first item. */
  const keyLine = (key: string) =>
    lineOf(root?.items.find((p) => isScalar(p.key) && p.key.value === key)?.key) ?? 0;
  const lines: Record<string, number> = {};
  const channelsNode = get("channels");
  const channels: string[] = [];
  if (isSeq(channelsNode)) {
    lines["channels"] = keyLine("channels");
    for (const item of channelsNode.items) if (isScalar(item)) channels.push(channelName(String(item.value)));
  }
  const nameNode = get("name");
  const depsNode = get("dependencies");
  if (depsNode !== undefined && !isSeq(depsNode))
    throw new UserError(`${path}: dependencies must be a list`, `fix dependencies: in ${file}`);
  if (isSeq(depsNode)) lines["dependencies"] = keyLine("dependencies");
  return {
    kind: "conda-environment",
    path,
    name: isScalar(nameNode) ? String(nameNode.value) : null,
    channels,
    platforms: [],
    systemCuda: {},
    environments: {},
    ...readDependencies(isSeq(depsNode) ? depsNode.items : [], path, lineOf),
    lines,
  };
}
