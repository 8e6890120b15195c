/**
 * doctor starts the probe before it loads anything the probe does not need (issue 17): every
 * module loaded before the spawn adds to the time over `import torch`. The modules reachable
 * from the CLI entry through static imports are what Node loads before doctor's run() starts;
 * the heavy ones (zod schemas, the KB, the TOML/YAML parsers, the fatbin reader) must be
 * reached only through a dynamic import() placed after the probe has started.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url));

/** Value imports and re-exports (not `import type`, which TypeScript erases). */
function staticImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type\b)?[^;]*?\bfrom\s+"([^"]+)"/g)) {
    if (match[2] === undefined) found.push(match[3]!);
  }
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g)) found.push(match[1]!);
  return found;
}

/** Every module Node loads through static imports from `entry`: repo paths and package names. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    const key = relative(SRC, file);
    if (seen.has(key)) continue;
    seen.add(key);
    for (const specifier of staticImports(readFileSync(file, "utf8"))) {
      if (specifier.startsWith("node:")) continue;
      if (!specifier.startsWith(".")) {
        seen.add(`package:${specifier}`);
        continue;
      }
      const target = resolve(dirname(file), specifier.replace(/\.js$/, ".ts"));
      if (existsSync(target)) queue.push(target);
    }
  }
  return seen;
}

const HEAVY = [
  "package:zod",
  "package:yaml",
  "package:smol-toml",
  "facts/schema.ts",
  "kb/index.ts",
  "fatbin/index.ts",
];

test("doctor's static imports (loaded before the probe starts) hold none of the heavy modules", () => {
  const loaded = staticClosure(resolve(SRC, "cli/main.ts"));
  for (const module of staticClosure(resolve(SRC, "cli/doctor.ts"))) loaded.add(module);
  assert.ok(loaded.has("gather/probe-run.ts"), "the probe's starter is loaded up front");
  assert.deepEqual(
    HEAVY.filter((module) => loaded.has(module)),
    [],
    "load these with import() after startProbe (src/gather/index.ts)",
  );
});

test("the closure sees a heavy module behind a static import (it can fail)", () => {
  const closure = staticClosure(resolve(SRC, "gather/probe.ts"));
  assert.ok(closure.has("facts/schema.ts"));
  assert.ok(closure.has("package:zod"));
  assert.deepEqual(staticImports('import type { A } from "./a.js";\nimport { b } from "./b.js";'), [
    "./b.js",
  ]);
});
