/**
 * The native plan's one edit of a user file: pyproject.toml gets an explicit [[tool.uv.index]] for
 * the PyTorch variant and [tool.uv.sources] entries routing torch (and torchvision/torchaudio when
 * the project uses them) to it, so `uv sync` installs and keeps the build that runs on the GPU.
 * The edit only appends lines: everything the user wrote stays as it was.
 */
import { parse } from "smol-toml";
import type { Plan } from "../plan/types.js";

export interface PyprojectPin {
  content: string | null;
  /** Why it was not changed (already pinned, or pinned elsewhere), when content is null. */
  note: string;
}

const TORCH_FAMILY = ["torch", "torchvision", "torchaudio"];

export function pinPyproject(plan: Plan, current: string): PyprojectPin {
  const native = plan.native;
  if (!native) throw new Error("pinPyproject needs a native plan");
  const doc = parse(current) as {
    tool?: { uv?: { sources?: Record<string, unknown>; index?: Array<{ name?: string; url?: string }> } };
  };
  const uv = doc.tool?.uv ?? {};
  const sources = uv.sources ?? {};
  const indexes = uv.index ?? [];
  const url = plan.options.indexUrl ?? native.build.indexUrl;
  const deps = new Set(plan.install.map((r) => r.normalizedName).concat("torch"));
  const wanted = TORCH_FAMILY.filter((name) => deps.has(name) || name === "torch");
  const missing = wanted.filter((name) => !(name in sources));
  const ours = indexes.find((i) => i.name === native.indexName);
  if (ours && ours.url !== url)
    return {
      content: null,
      note: `[[tool.uv.index]] ${native.indexName} already points at ${ours.url}; left unchanged`,
    };
  if (missing.length === 0)
    return { content: null, note: "torch already has a [tool.uv.sources] entry; left unchanged" };
  const added: string[] = [];
  const indexBlock = ours
    ? ""
    : `\n# Added by gpuprep init: torch ${native.build.torch} ${native.build.variant} runs natively on ${plan.target.gpuName}.\n[[tool.uv.index]]\nname = "${native.indexName}"\nurl = "${url}"\nexplicit = true\n`;
  const entries = missing.map((name) => `${name} = [{ index = "${native.indexName}" }]`);
  let content = current.endsWith("\n") ? current : `${current}\n`;
  const header = /^\[tool\.uv\.sources\][ \t]*(#.*)?$/m.exec(content);
  if (header) {
    // Entries go right under the existing table header: a second [tool.uv.sources] would be invalid TOML.
    const at = header.index + header[0].length;
    content = `${content.slice(0, at)}\n${entries.join("\n")}${content.slice(at)}`;
    content += indexBlock;
  } else if ("sources" in uv) {
    // Written as a dotted key or inline table somewhere else: too many shapes to edit safely.
    return {
      content: null,
      note: "[tool.uv.sources] is not written as a table header; add the torch entry by hand (SETUP.md shows it)",
    };
  } else {
    content += `${indexBlock}\n[tool.uv.sources]\n${entries.join("\n")}\n`;
  }
  added.push(...missing);
  parse(content); // the edit must leave valid TOML; a throw here is a bug, not a user error
  return {
    content,
    note: `torch${added.length > 1 ? ` (and ${added.slice(1).join(", ")})` : ""} pinned to the ${native.indexName} index`,
  };
}
