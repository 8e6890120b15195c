/**
 * A pyproject.toml that already routes torch, torchvision or torchaudio somewhere
 * ([tool.uv.sources]) gets that route replaced by the planned index: the old line stays as a
 * comment above the new one, so the diff shows both. An entry gpuprep cannot rewrite safely (a
 * multi-line value, a dotted key) stops init with the reason, never a silent "left unchanged".
 */
import { parse } from "smol-toml";
import { UserError } from "../errors.js";
import { singleLine, tomlString } from "./quote.js";

interface Reroute {
  content: string;
  /** "torch (was pytorch-cu118, https://download.pytorch.org/whl/cu118)". */
  replaced: string[];
  /** Already routed to the planned index URL, kept as written. */
  kept: string[];
}

type Index = { name?: string; url?: string };

function sameUrl(a: string | undefined, b: string): boolean {
  return a !== undefined && a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}

function describe(value: unknown, indexes: Index[]): string {
  const entries = (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown>>;
  return entries
    .map((entry) => {
      if (typeof entry?.["index"] === "string") {
        const url = indexes.find((i) => i.name === entry["index"])?.url;
        return `index ${entry["index"]}${url ? ` (${url})` : ""}`;
      }
      const kind = ["git", "url", "path", "workspace"].find((k) => k in (entry ?? {}));
      return kind ? `${kind} ${String(entry[kind])}` : "another source";
    })
    .join(", ");
}

/** The line `name = ...` inside the [tool.uv.sources] table, when it holds the whole entry. */
function findEntryLine(content: string, name: string): { start: number; end: number; text: string } | null {
  const header = /^\[tool\.uv\.sources\][ \t]*(#.*)?$/m.exec(content);
  if (!header) return null;
  const bodyStart = header.index + header[0].length;
  const nextHeader = /^\s*\[/m.exec(content.slice(bodyStart));
  const bodyEnd = nextHeader ? bodyStart + nextHeader.index : content.length;
  const body = content.slice(bodyStart, bodyEnd);
  const key = new RegExp(`^[ \\t]*(?:${name}|"${name}"|'${name}')[ \\t]*=.*$`, "m").exec(body);
  if (!key) return null;
  try {
    parse(key[0].trim()); // one complete `key = value` on this line, or not rewritable here
  } catch {
    return null;
  }
  const start = bodyStart + key.index;
  return { start, end: start + key[0].length, text: key[0] };
}

export function rerouteTorchSources(
  content: string,
  sources: Record<string, unknown>,
  indexes: Index[],
  names: string[],
  target: { indexName: string; url: string; why: string } | { offline: string },
): Reroute {
  const replaced: string[] = [];
  const kept: string[] = [];
  let out = content;
  for (const name of names) {
    if (!(name in sources)) continue;
    const value = sources[name];
    const entries = (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown>>;
    const only = entries.length === 1 ? entries[0] : undefined;
    const routedIndex =
      only && typeof only["index"] === "string" && Object.keys(only).length === 1 ? only["index"] : null;
    if (
      "url" in target &&
      routedIndex &&
      sameUrl(indexes.find((i) => i.name === routedIndex)?.url, target.url)
    ) {
      kept.push(name);
      continue;
    }
    const line = findEntryLine(out, name);
    const was = describe(value, indexes);
    if (!line)
      throw new UserError(
        `init: pyproject.toml routes ${name} to ${was} ([tool.uv.sources]), and that entry is not one line under a [tool.uv.sources] header that gpuprep can replace`,
        "url" in target
          ? `write it as ${name} = [{ index = "${target.indexName}" }] with a [[tool.uv.index]] named ${target.indexName} (url ${target.url}), or remove it and rerun`
          : `remove it (an offline build with --wheelhouse takes ${name} from ${target.offline}/) and rerun`,
      );
    const replacement =
      "url" in target
        ? `# ${singleLine(`gpuprep init replaced this route (${target.why}); it was:`)}\n# ${line.text.trim()}\n${name} = [{ index = ${tomlString(target.indexName)} }]`
        : `# ${singleLine(`gpuprep init disabled this route: an offline build (--wheelhouse) takes ${name} from ${target.offline}/`)}\n# ${line.text.trim()}`;
    out = out.slice(0, line.start) + replacement + out.slice(line.end);
    replaced.push(`${name} (was ${was})`);
  }
  return { content: out, replaced, kept };
}
