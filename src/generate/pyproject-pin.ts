/**
 * The native plan's one edit of a user file: pyproject.toml gets an explicit [[tool.uv.index]] for
 * the PyTorch variant and [tool.uv.sources] entries routing torch (and torchvision/torchaudio when
 * the project uses them) to it, so `uv sync` installs and keeps the build that runs on the GPU.
 * The edit only appends lines: everything the user wrote stays as it was.
 */
import { parse } from "smol-toml";
import type { NativePlan } from "../plan/types.js";
import { UserError } from "../errors.js";
import { rerouteTorchSources } from "./torch-sources.js";
import { singleLine, tomlKey, tomlString } from "./quote.js";

interface PyprojectPin {
  content: string | null;
  /** Why it was not changed (already pinned, or pinned elsewhere), when content is null. */
  note: string;
}

const TORCH_FAMILY = ["torch", "torchvision", "torchaudio"];

type UvTable = Record<string, unknown>;
type UvIndex = { name?: string; url?: string };

/**
 * Adds `entries` (name -> TOML value) to the [tool.uv.<table>] table: right under its header when
 * the file has one (a second header would be invalid TOML), as a new table at the end when it has
 * none. Names already in the table are the user's and stay; a table written as dotted keys or an
 * inline table is left alone (too many shapes to edit safely) and reported.
 */
function addToUvTable(
  content: string,
  uv: UvTable,
  table: string,
  entries: Array<[string, string]>,
  comment: string,
): { content: string; added: string[]; skipped: string | null } {
  const existing = (uv[table] ?? {}) as Record<string, unknown>;
  const missing = entries.filter(([name]) => !(name in existing));
  if (missing.length === 0) return { content, added: [], skipped: null };
  const lines = missing.map(([name, value]) => `${tomlKey(name)} = ${value}`);
  const header = new RegExp(`^\\[tool\\.uv\\.${table.replace(/-/g, "\\-")}\\][ \\t]*(#.*)?$`, "m").exec(
    content,
  );
  if (header) {
    const at = header.index + header[0].length;
    return {
      content: `${content.slice(0, at)}\n${lines.join("\n")}${content.slice(at)}`,
      added: missing.map(([name]) => name),
      skipped: null,
    };
  }
  if (table in uv)
    return {
      content,
      added: [],
      skipped: `[tool.uv.${table}] is not written as a table header; add ${missing.map(([n]) => n).join(", ")} by hand (SETUP.md shows it)`,
    };
  return {
    content: `${content}\n${comment}[tool.uv.${table}]\n${lines.join("\n")}\n`,
    added: missing.map(([name]) => name),
    skipped: null,
  };
}

/**
 * Adds names to a list key of [tool.uv] itself (no-binary-package): under its header where the
 * file has one, else as a new [tool.uv] table (valid after [tool.uv.sources]: the super-table is
 * defined once). A key the user already wrote is extended only by hand, and said.
 */
function addUvKey(
  content: string,
  uv: UvTable,
  key: string,
  names: string[],
): { content: string; note: string | null } {
  const existing = uv[key];
  if (existing !== undefined) {
    const have = Array.isArray(existing) ? existing.map(String) : [];
    const missing = names.filter((n) => !have.includes(n));
    return {
      content,
      note:
        missing.length > 0
          ? `[tool.uv] ${key} is already set; add ${missing.join(", ")} to it by hand`
          : null,
    };
  }
  const line = `${tomlKey(key)} = [${names.map(tomlString).join(", ")}]`;
  const header = /^\[tool\.uv\][ \t]*(#.*)?$/m.exec(content);
  if (header) {
    const at = header.index + header[0].length;
    return {
      content: `${content.slice(0, at)}\n${line}${content.slice(at)}`,
      note: `${names.join(", ")} always built from source ([tool.uv] ${key})`,
    };
  }
  if ("no-binary-package" in uv || Object.keys(uv).some((k) => typeof uv[k] !== "object"))
    return { content, note: `add ${line} to [tool.uv] by hand (it is not written as a table header)` };
  return {
    content: `${content}\n# Added by gpuprep init: uv sync and uv run build these from source, never the index's wheel.\n[tool.uv]\n${line}\n`,
    note: `${names.join(", ")} always built from source ([tool.uv] ${key})`,
  };
}

/** The file as it is being edited, and what each step says it did. */
interface Edit {
  content: string;
  notes: string[];
}

/** The plan's index name, already given to another URL in the file, is not taken over (a wheelhouse uses none). */
function refuseIndexNameClash(plan: NativePlan, ours: UvIndex | undefined, url: string): void {
  if (ours && ours.url !== url && !plan.options.wheelhouse)
    throw new UserError(
      `init: pyproject.toml already has a [[tool.uv.index]] named ${plan.native.indexName} pointing at ${ours.url}, the name the plan needs for ${url}`,
      `rename or remove that index and rerun`,
    );
}

/**
 * Routes the project already has for the torch family: kept when they reach the planned index,
 * else replaced (the old line left as a comment) or, where that is not safe, init stops.
 * Returns the names whose routes were kept.
 */
function rerouteExisting(
  edit: Edit,
  plan: NativePlan,
  uv: UvTable,
  indexes: UvIndex[],
  url: string,
): string[] {
  const native = plan.native;
  const rerouted = rerouteTorchSources(
    edit.content,
    (uv.sources ?? {}) as Record<string, unknown>,
    indexes,
    TORCH_FAMILY,
    plan.options.wheelhouse
      ? { offline: plan.options.wheelhouse }
      : {
          indexName: native.indexName,
          url,
          why: `torch ${native.build.torch} ${native.build.variant} runs natively on ${singleLine(plan.target.gpuName)}`,
        },
  );
  edit.content = rerouted.content;
  if (rerouted.replaced.length > 0)
    edit.notes.push(
      `${plan.options.wheelhouse ? "route disabled" : `route replaced by the ${native.indexName} index`}: ${rerouted.replaced.join(", ")}`,
    );
  if (rerouted.kept.length > 0)
    edit.notes.push(`${rerouted.kept.join(", ")} already routed to ${url}; kept as written`);
  return rerouted.kept;
}

/**
 * The planned index (unless the project's own index of that name is there) and [tool.uv.sources]
 * entries routing the torch family the project uses to it, past those already routed there.
 */
function routeTorchFamily(
  edit: Edit,
  plan: NativePlan,
  uv: UvTable,
  route: { url: string; ours: UvIndex | undefined; kept: string[] },
): void {
  const native = plan.native;
  const deps = new Set(plan.install.map((r) => r.normalizedName).concat("torch"));
  const wanted = TORCH_FAMILY.filter((name) => deps.has(name) || name === "torch");
  // Every route already reaches the planned URL under the project's own index name: nothing to add.
  const allKept = wanted.every((name) => route.kept.includes(name));
  if (!route.ours && !allKept)
    edit.content += `\n# Added by gpuprep init: torch ${native.build.torch} ${native.build.variant} runs natively on ${singleLine(plan.target.gpuName)}.\n[[tool.uv.index]]\nname = ${tomlString(native.indexName)}\nurl = ${tomlString(route.url)}\nexplicit = true\n`;
  const sources = addToUvTable(
    edit.content,
    uv,
    "sources",
    wanted
      .filter((name) => !route.kept.includes(name))
      .map((name) => [name, `[{ index = ${tomlString(native.indexName)} }]`]),
    "",
  );
  edit.content = sources.content;
  if (sources.added.length > 0)
    edit.notes.push(`${sources.added.join(", ")} pinned to the ${native.indexName} index`);
  if (sources.skipped) edit.notes.push(sources.skipped);
}

/**
 * Source builds of project dependencies: uv builds them in isolation, so the build environment
 * gets the venv's exact torch (match-runtime) and ninja, and the target's TORCH_CUDA_ARCH_LIST.
 */
function sourceBuildSettings(edit: Edit, plan: NativePlan, uv: UvTable): void {
  const built = plan.sourceBuilds.filter((b) => b.inProject);
  if (built.length === 0) return;
  // Offline, match-runtime pins the build's torch to the wheelhouse as an index, which --no-index
  // then hides (uv 0.11.15 fails "torch was not found"); the wheelhouse's one torch of the planned
  // series is the runtime's, so the series is the pin there.
  const torchForBuilds = plan.options.wheelhouse
    ? `"torch==${plan.native.build.torch}.*"`
    : `{ requirement = "torch", match-runtime = true }`;
  const why = `# ${singleLine(`Added by gpuprep init: ${built.map((b) => b.name).join(", ")} compiled against the venv's torch for compute capability ${built[0]!.archList} only.`)}\n`;
  const buildDeps = addToUvTable(
    edit.content,
    uv,
    "extra-build-dependencies",
    built.map((b) => [b.name, `["ninja", ${torchForBuilds}]`]),
    why,
  );
  const vars = addToUvTable(
    buildDeps.content,
    uv,
    "extra-build-variables",
    built.map((b) => [
      b.name,
      `{ ${[["TORCH_CUDA_ARCH_LIST", b.archList], ...Object.entries(b.env)].map(([k = "", v = ""]) => `${tomlKey(k)} = ${tomlString(v)}`).join(", ")} }`,
    ]),
    "",
  );
  edit.content = vars.content;
  if (buildDeps.added.length > 0)
    edit.notes.push(`${buildDeps.added.join(", ")} built against the venv's torch`);
  for (const skipped of [buildDeps.skipped, vars.skipped]) if (skipped) edit.notes.push(skipped);
}

/**
 * `uv run` syncs the venv to the lock before it runs anything; without this it would put the
 * index's wheel back in place of a source build (seed 003 exported UV_NO_SYNC=1 for that).
 * Every source build, also one asked for by name: a dependency of a dependency (unsloth's
 * xformers) is synced from the index like a direct one.
 */
function neverBinaries(edit: Edit, plan: NativePlan, uv: UvTable): void {
  if (plan.sourceBuilds.length === 0) return;
  const noBinary = addUvKey(
    edit.content,
    uv,
    "no-binary-package",
    plan.sourceBuilds.map((b) => b.name),
  );
  edit.content = noBinary.content;
  if (noBinary.note) edit.notes.push(noBinary.note);
}

export function pinPyproject(plan: NativePlan, current: string): PyprojectPin {
  const native = plan.native;
  const doc = parse(current) as { tool?: { uv?: UvTable } };
  const uv = doc.tool?.uv ?? {};
  const indexes = (uv.index ?? []) as UvIndex[];
  const url = plan.options.indexUrl ?? native.build.indexUrl;
  const ours = indexes.find((i) => i.name === native.indexName);
  refuseIndexNameClash(plan, ours, url);
  const original = current.endsWith("\n") ? current : `${current}\n`;
  const edit: Edit = { content: original, notes: [] };
  const kept = rerouteExisting(edit, plan, uv, indexes, url);
  if (plan.options.wheelhouse)
    // Offline, uv ignores every index (--no-index): a torch pinned to one could not be found.
    // torch comes from the wheelhouse like everything else, so it must hold the planned build.
    edit.notes.push(
      `torch is not pinned to an index: it comes from ${plan.options.wheelhouse}/, which must hold torch ${native.build.torch} ${native.build.variant} (${url})`,
    );
  else routeTorchFamily(edit, plan, uv, { url, ours, kept });
  sourceBuildSettings(edit, plan, uv);
  neverBinaries(edit, plan, uv);
  const { content, notes } = edit;
  if (content === original)
    return {
      content: null,
      note: notes.length > 0 ? notes.join("; ") : `already routes torch to ${url}; unchanged`,
    };
  parse(content); // the edit must leave valid TOML; a throw here is a bug, not a user error
  return {
    content,
    note: notes.length > 0 ? notes.join("; ") : `[[tool.uv.index]] ${native.indexName} added`,
  };
}
