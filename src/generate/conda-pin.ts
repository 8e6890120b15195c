/**
 * A conda project's native plan edits its own environment.yml (issue 22 item 6), as pixi-pin.ts
 * edits pixi.toml, so it stays a conda project: the conda torch lines (pytorch, pytorch-cuda,
 * cpuonly, torchvision ...) are commented out, torch comes from the PyTorch index variant that runs
 * under the `pip:` list (`--extra-index-url`: pip prefers the index's `+cuXXX` build, whose local
 * version sorts above PyPI's of the same release, and still finds the other packages on PyPI), and
 * the pins the plan had to change (python) are changed in place. A text edit, not a YAML re-dump:
 * every other line, comment and the order stay as the user wrote them. Block style only.
 */
import { isMap, isSeq, parseDocument } from "yaml";
import type { NativePlan } from "../plan/types.js";
import { UserError } from "../errors.js";
import { singleLine } from "./quote.js";

/** Conda packages of torch's family: replaced by the index's wheels (or, for the CUDA selectors, dropped). */
const CONDA_TORCH = new Set([
  "pytorch",
  "pytorch-gpu",
  "pytorch-cpu",
  "pytorch-cuda",
  "torchvision",
  "torchaudio",
  "cpuonly",
]);
/** PyPI name of each conda one that is installed from the index. */
const PYPI_OF: Record<string, string> = {
  pytorch: "torch",
  "pytorch-gpu": "torch",
  torchvision: "torchvision",
  torchaudio: "torchaudio",
};
const PIP_TORCH = /^(torch|torchvision|torchaudio)(?![\w.-])/i;
const PYTORCH_INDEX =
  /^(--index-url|-i|--extra-index-url)(\s*=\s*|\s+)(https?:\/\/download\.pytorch\.org\/\S+)/;

/** One `- item` of a block sequence: its line, indent and text without the comment or quotes. */
interface Item {
  line: number;
  indent: number;
  text: string;
}

/** The dependencies: block: its conda items, and its pip: item with the pip entries under it. */
interface DependencyBlock {
  /** Index one past its last item's line (where new items go). */
  end: number;
  items: Item[];
  pip: { item: Item; entries: Item[]; end: number } | null;
}

function itemAt(lines: string[], i: number): Item | null {
  const match = /^(\s*)-\s+(.*?)\s*$/.exec(lines[i]!);
  if (!match) return null;
  const text = match[2]!.replace(/\s+#.*$/, "").replace(/^(["'])(.*)\1$/, "$2");
  return { line: i, indent: match[1]!.length, text };
}

function dependencyBlock(lines: string[], file: string): DependencyBlock {
  const key = lines.findIndex((l) => /^dependencies\s*:\s*(#.*)?$/.test(l));
  if (key < 0)
    throw new UserError(
      `${file}: no block-style dependencies: list to edit`,
      `write dependencies: in ${file} with one "- package" per line`,
    );
  const block: DependencyBlock = { end: key + 1, items: [], pip: null };
  let indent: number | null = null;
  for (let i = key + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(#.*)?$/.test(line)) continue;
    if (/^[^\s-]/.test(line)) break; // the next top-level key
    const item = itemAt(lines, i);
    indent ??= item?.indent ?? null;
    if (item && item.indent === indent) {
      block.items.push(item);
      if (/^pip\s*:$/.test(item.text)) block.pip = { item, entries: [], end: i + 1 };
    } else if (item && block.pip && item.line > block.pip.item.line && item.indent > indent!) {
      block.pip.entries.push(item);
      block.pip.end = i + 1;
    }
    block.end = i + 1;
  }
  return block;
}

function condaName(text: string): string {
  return /^(?:[\w.-]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)/.exec(text)?.[1]?.toLowerCase() ?? "";
}

interface CondaPin {
  content: string;
  /** One line per change, as a diff with its reason. */
  notes: string[];
}

interface Edit {
  lines: string[];
  notes: string[];
  file: string;
}

function commentOut(edit: Edit, at: number, reason: string): void {
  const before = edit.lines[at]!;
  const indent = /^\s*/.exec(before)![0];
  edit.lines[at] = `${indent}# ${before.trimStart()}  # gpuprep init: ${reason}`;
  edit.notes.push(`${edit.file}:${at + 1}: ${before.trim()}  ->  (commented out: ${reason})`);
}

/** The pins the plan changed (python=3.9 where no runnable torch has a 3.9 wheel), in place. */
function applyLineChanges(plan: NativePlan, edit: Edit): void {
  for (const change of plan.lineChanges) {
    const match = new RegExp(`^${edit.file.replace(/\./g, "\\.")}:(\\d+)$`).exec(change.origin);
    const at = match ? Number(match[1]) - 1 : -1;
    const line = edit.lines[at];
    if (line === undefined || !line.includes(change.from)) continue;
    const item = itemAt(edit.lines, at);
    // A torch line is commented out and the planned torch added below it, not changed in place.
    if (item && (CONDA_TORCH.has(condaName(item.text)) || PIP_TORCH.test(item.text))) continue;
    edit.lines[at] =
      `${line.replace(change.from, change.to)}  # changed by gpuprep init (was ${change.from})`;
    edit.notes.push(
      `${change.origin}: ${change.from}  ->  ${change.to} (no torch that runs on the GPU allows the old pin)`,
    );
  }
}

export function pinCondaEnvironment(plan: NativePlan, current: string, file: string): CondaPin {
  const build = plan.native.build;
  const url = plan.options.indexUrl ?? build.indexUrl;
  const edit: Edit = { lines: current.replace(/\n$/, "").split("\n"), notes: [], file };
  const why = `torch ${build.torch} ${build.variant} from the PyTorch index runs natively on ${singleLine(plan.target.gpuName)} (pip: list)`;
  applyLineChanges(plan, edit);
  const block = dependencyBlock(edit.lines, file);
  const moved = ["torch"];
  for (const item of block.items) {
    const name = condaName(item.text);
    if (!CONDA_TORCH.has(name)) continue;
    const pypi = PYPI_OF[name];
    if (pypi && !moved.includes(pypi)) moved.push(pypi);
    commentOut(edit, item.line, why);
  }
  const indexLine = block.pip?.entries.find((e) => PYTORCH_INDEX.test(e.text)) ?? null;
  const keep = keepsPipTorch(plan, indexLine, url);
  replacePipTorch(edit, block, moved, keep ? null : why);
  const requirements = moved.map((name) => (name === "torch" ? `torch==${build.torch}.*` : name));
  if (indexLine) pointIndexLine(edit, indexLine, url);
  const entries = indexLine ? requirements : [`--extra-index-url ${url}`, ...requirements];
  if (entries.length > 0) insertPipEntries(edit, block, entries, indexLine);
  const content = `${edit.lines.join("\n")}\n`;
  checkStillConda(content, file);
  return { content, notes: edit.notes };
}

/**
 * The pip: list's own torch lines: commented out (`why`) and added again as planned, or, where the
 * list already asks for the torch that runs (`why` null), kept and not added a second time.
 */
function replacePipTorch(edit: Edit, block: DependencyBlock, moved: string[], why: string | null): void {
  for (const entry of block.pip?.entries ?? []) {
    const name = PIP_TORCH.exec(entry.text)?.[1]?.toLowerCase();
    if (!name) continue;
    if (why === null) {
      if (moved.includes(name)) moved.splice(moved.indexOf(name), 1);
    } else {
      if (!moved.includes(name)) moved.push(name);
      commentOut(edit, entry.line, why);
    }
  }
}

/** A pip: line that names another PyTorch index variant names the planned one. */
function pointIndexLine(edit: Edit, indexLine: Item, url: string): void {
  const oldUrl = PYTORCH_INDEX.exec(indexLine.text)![3]!;
  if (oldUrl === url) return;
  const before = edit.lines[indexLine.line]!;
  edit.lines[indexLine.line] = `${before.replace(oldUrl, url)}  # gpuprep init: was ${oldUrl}`;
  edit.notes.push(
    `${edit.file}:${indexLine.line + 1}: ${before.trim()}  ->  ${edit.lines[indexLine.line]!.trim()}`,
  );
}

/**
 * The pip: list already takes torch from the planned index with a pin the plan kept (no conflict,
 * no line change): its torch lines stay as they are.
 */
function keepsPipTorch(plan: NativePlan, indexLine: Item | null, url: string): boolean {
  if (!indexLine || PYTORCH_INDEX.exec(indexLine.text)![3] !== url) return false;
  return !plan.conflicts.some(
    (c) =>
      c.requirement === null || ["torch", "torchvision", "torchaudio"].includes(c.requirement.normalizedName),
  );
}

/** The new pip: entries, after the index line where there is one; a pip: item (and pip itself) where there is none. */
function insertPipEntries(
  edit: Edit,
  block: DependencyBlock,
  entries: string[],
  indexLine: Item | null,
): void {
  const { file, lines } = edit;
  const depIndent = " ".repeat(block.items[0]?.indent ?? 2);
  const reason = "gpuprep init: the torch that runs on this GPU";
  if (block.pip) {
    const indent = " ".repeat(block.pip.entries[0]?.indent ?? depIndent.length + 4);
    const at = indexLine ? indexLine.line + 1 : block.pip.item.line + 1;
    lines.splice(at, 0, ...entries.map((e) => `${indent}- ${e}  # ${reason}`));
    for (const e of entries) edit.notes.push(`${file}: + ${e} (pip: list; ${reason})`);
    return;
  }
  const added: string[] = [];
  if (!block.items.some((item) => condaName(item.text) === "pip" && !item.text.includes(":")))
    added.push(`${depIndent}- pip  # gpuprep init: conda installs the pip: list with it`);
  added.push(
    `${depIndent}- pip:  # added by gpuprep init: torch from the PyTorch index variant that runs on this GPU`,
    ...entries.map((e) => `${depIndent}    - ${e}`),
  );
  lines.splice(block.end, 0, ...added);
  for (const e of entries) edit.notes.push(`${file}: + ${e} (a new pip: list; ${reason})`);
}

/** The environment file's `name:` (what `env update` and `run` name), or null where it has none. */
export function environmentName(text: string): string | null {
  const doc = parseDocument(text);
  const name = isMap(doc.contents) ? doc.contents.get("name") : null;
  return typeof name === "string" && name !== "" ? name : null;
}

/** The edit must leave a conda environment file: a throw here is a bug, not a user error. */
function checkStillConda(content: string, file: string): void {
  const doc = parseDocument(content);
  const dependencies = isMap(doc.contents) ? doc.contents.get("dependencies", true) : null;
  if (doc.errors.length > 0 || !isSeq(dependencies))
    throw new Error(`internal: the edit of ${file} is no longer a conda environment file`);
}
