/**
 * Where keys sit in a TOML file, so findings can name the exact line to change. smol-toml gives
 * values but no positions; this scans the text the way TOML is written in practice (one key per
 * line, [table] and [[array]] headers, arrays of strings across lines). A key it cannot place
 * simply has no line: callers then name the file and the key.
 */

/** "tool.uv.sources.torch" -> 23; array items as "project.dependencies[]=torch==2.5.1" -> 9. */
export type TomlLines = Record<string, number>;

/** Splits a dotted key ("a.\"b.c\".d") into its parts, unquoting them. */
function keyParts(text: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = null;
      else current += char;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === ".") {
      parts.push(current.trim());
      current = "";
    } else current += char;
  }
  parts.push(current.trim());
  return parts;
}

/** The line without its comment: a # outside strings. */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quote) {
      if (char === "\\" && quote === '"') i++;
      else if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "#") return line.slice(0, i);
  }
  return line;
}

/** Bracket depth change of a line, ignoring brackets inside strings ("torch[cuda]"). */
function depthChange(text: string): number {
  const bare = text.replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, "");
  return (bare.match(/\[/g) ?? []).length - (bare.match(/\]/g) ?? []).length;
}

function joinKey(parts: string[]): string {
  return parts.join(".");
}

/** The quoted strings on one line of an array (`"torch==2.5.1", "numpy",`). */
function quotedStrings(text: string): string[] {
  const found: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text))
    found.push(match[1] ?? match[2] ?? "");
  return found;
}

export function tomlKeyLines(text: string): TomlLines {
  const lines: TomlLines = {};
  const arrayCounts = new Map<string, number>();
  let table: string[] = [];
  /** The key of a multi-line array being read, and its bracket depth. */
  let openArray: { key: string; depth: number } | null = null;
  let inMultilineString: string | null = null;
  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNo = index + 1;
    if (inMultilineString) {
      if (raw.includes(inMultilineString)) inMultilineString = null;
      return;
    }
    const line = stripComment(raw).trim();
    if (line === "" || line.startsWith("#")) return;
    if (openArray) {
      for (const item of quotedStrings(line)) lines[`${openArray.key}[]=${item}`] ??= lineNo;
      openArray.depth += depthChange(line);
      if (openArray.depth <= 0) openArray = null;
      return;
    }
    const header = /^\[\[\s*([^\]]+?)\s*\]\]$/.exec(line) ?? /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header) {
      table = keyParts(header[1] ?? "");
      if (line.startsWith("[[")) {
        const base = joinKey(table);
        const count = arrayCounts.get(base) ?? 0;
        arrayCounts.set(base, count + 1);
        table = [...table.slice(0, -1), `${table[table.length - 1]}[${count}]`];
      }
      lines[joinKey(table)] ??= lineNo;
      return;
    }
    const assignment = /^((?:"[^"]*"|'[^']*'|[A-Za-z0-9_.\s-])+?)\s*=\s*(.*)$/.exec(line);
    if (!assignment) return;
    const parts = keyParts(assignment[1] ?? "");
    if (parts.some((part) => part === "")) return;
    const key = joinKey([...table, ...parts]);
    lines[key] ??= lineNo;
    const value = assignment[2] ?? "";
    const triple = /^("""|''')/.exec(value);
    if (triple && !value.slice(3).includes(triple[1] ?? "")) {
      inMultilineString = triple[1] ?? null;
      return;
    }
    if (value.startsWith("[")) {
      for (const item of quotedStrings(value)) lines[`${key}[]=${item}`] ??= lineNo;
      const depth = depthChange(value);
      if (depth > 0) openArray = { key, depth };
    }
  });
  return lines;
}
