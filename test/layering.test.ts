/**
 * The layering of docs/DESIGN.md, checked on every import under src/: gather (through
 * transports) is the only way out to the world, everything after it is a function of Facts and
 * the knowledge base, and nothing below the CLI imports from it. A new edge that breaks this
 * fails here, naming the file and the import.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative, dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./support/source-files.js";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/**
 * The map itself lives in scripts/guards/layers.mjs, read by this test and by ESLint's
 * `gpuprep/layers` rule (an editor error where a forbidden import is written). It is loaded from
 * the checkout at run time: the test runs from dist/test/, two folders below it.
 */
const LAYERS_URL = new URL("../../scripts/guards/layers.mjs", import.meta.url);
const layers = (await import(LAYERS_URL.href)) as typeof import("../scripts/guards/layers.mjs");
const ALLOWED = layers.ALLOWED;
const CHILD_PROCESS_ALLOWED = new Set(layers.CHILD_PROCESS_ALLOWED);
const SPAWN_HELPERS = layers.SPAWN_HELPERS;
const SPAWN_HELPERS_ALLOWED = new Set(layers.SPAWN_HELPERS_ALLOWED);
const SPAWN_MODULE = join(SRC, "transports", "spawn.ts");

const layerOf = (file: string): string => layers.layerOf(SRC, file);

/** Whether `text` imports node:child_process: statically, dynamically or by require. */
function importsChildProcess(text: string): boolean {
  return /(?:\bfrom\s+|\bimport\s*\(?\s*|\brequire\(\s*)"(?:node:)?child_process"/.test(text);
}

/** The spawn helpers `text` (the file `file`) imports from src/transports/spawn.js. */
function spawnHelpersImported(text: string, file: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b([^;]*?)\bfrom\s+"([^"]+)"/g)) {
    const target = resolve(dirname(file), match[2]!).replace(/\.js$/, ".ts");
    if (target !== SPAWN_MODULE) continue;
    // `import { runCommand as run }`, `export * from`: any name or a star counts.
    const names = match[1]!.includes("*") ? ["*"] : (match[1]!.match(/[A-Za-z_$][\w$]*/g) ?? []);
    found.push(...names.filter((name) => name === "*" || SPAWN_HELPERS.includes(name)));
  }
  return found;
}

function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/g))
    specifiers.push(match[1]!);
  for (const match of text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) specifiers.push(match[1]!);
  return specifiers;
}

test("every import under src/ follows the layering in docs/DESIGN.md", () => {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 50, `found only ${files.length} source files under ${SRC}`);
  const broken: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    const allowed = ALLOWED[from];
    assert.ok(allowed, `src/${relative(SRC, file)}: folder "${from}" has no entry in ALLOWED; add one`);
    for (const specifier of importsOf(readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue;
      const to = layerOf(resolve(dirname(file), specifier));
      if (to === from || allowed.includes("*") || allowed.includes(to)) continue;
      broken.push(`src/${relative(SRC, file)} imports ${specifier} (${from} -> ${to})`);
    }
  }
  assert.deepEqual(broken, []);
});

test("only src/transports starts child processes", () => {
  const broken: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (CHILD_PROCESS_ALLOWED.has(rel) || CHILD_PROCESS_ALLOWED.has(layerOf(file))) continue;
    if (importsChildProcess(readFileSync(file, "utf8"))) broken.push(rel);
  }
  assert.deepEqual(broken, []);
});

test("only src/transports and src/gather import the spawn helpers; the rest asks a Transport", () => {
  const broken: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (SPAWN_HELPERS_ALLOWED.has(layerOf(file))) continue;
    const names = spawnHelpersImported(readFileSync(file, "utf8"), file);
    if (names.length > 0) broken.push(`src/${relative(SRC, file)} imports ${names.join(", ")} from spawn.js`);
  }
  assert.deepEqual(broken, []);
});

test("the spawn-helper check sees an import of runCommand, renamed or not (it can fail)", () => {
  const inValidate = join(SRC, "validate", "payload.ts");
  assert.deepEqual(
    spawnHelpersImported(
      'import { CommandNotFoundError, runCommand } from "../transports/spawn.js";',
      inValidate,
    ),
    ["runCommand"],
  );
  assert.deepEqual(
    spawnHelpersImported('import {\n  runWithInput as run,\n} from "../transports/spawn.js";', inValidate),
    ["runWithInput"],
  );
  assert.deepEqual(spawnHelpersImported('export * from "../transports/spawn.js";', inValidate), ["*"]);
  // The error class is not a way to start a process; another module's runCommand is not spawn's.
  assert.deepEqual(
    spawnHelpersImported('import { CommandNotFoundError } from "../transports/spawn.js";', inValidate),
    [],
  );
  assert.deepEqual(spawnHelpersImported('import { runCommand } from "./spawn.js";', inValidate), []);
  assert.ok(!SPAWN_HELPERS_ALLOWED.has(layerOf(inValidate)));
  for (const text of [
    'import { spawn } from "node:child_process";',
    'const { execFile } = await import("child_process");',
    'const cp = require("node:child_process");',
  ])
    assert.ok(importsChildProcess(text), text);
  assert.ok(!importsChildProcess('import { spawn } from "./spawn.js"; // child_process'));
});

test("the layering check sees a forbidden edge (it can fail)", () => {
  const text = 'import type { Style } from "../cli/output.js";\nimport { x } from "node:fs";';
  const specifiers = importsOf(text);
  assert.deepEqual(specifiers, ["../cli/output.js", "node:fs"]);
  const to = layerOf(resolve(join(SRC, "report"), specifiers[0]!));
  assert.equal(to, "cli");
  assert.ok(!ALLOWED.report!.includes(to));
});

/**
 * issue 16: one stdout writer. Commands write through src/report/terminal.ts (text sanitized,
 * documents as they are), so sanitizing, a closed pipe and the final newline are handled once.
 */
test("only report/terminal.ts writes to stdout (no process.stdout.write or console.log elsewhere)", () => {
  const writer = "report/terminal.ts";
  const offenders: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (rel === writer) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/process\.stdout\.write\(|console\.(log|info)\(/.test(line))
          offenders.push(`src/${rel}:${i + 1}`);
      });
  }
  assert.deepEqual(offenders, []);
  assert.match(readFileSync(join(SRC, writer), "utf8"), /process\.stdout\.write\(/, "the writer itself");
});
