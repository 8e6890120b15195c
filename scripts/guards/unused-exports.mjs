#!/usr/bin/env node
/**
 * No export that no other file uses (issue 23 item 7, "a dead or over-exported code check"). An
 * export of a module under src/ is used when a file of src/, test/, bench/ or scripts/ imports it
 * by name, through a namespace or `export *`, a dynamic import, or a re-export (src/index.ts's
 * re-exports are the library's surface, docs/library.md). Any other export is over-exported (the
 * file uses it itself: drop `export`) or dead (nothing uses it: delete it). The import graph is
 * scripts/guards/import-graph.mjs's, read with the TypeScript parser, as the import-circle check.
 *
 * eslint-ratchet.json's `unusedExports` lists those present when the guard came in, by file; the
 * list may only shrink. ESLint's `gpuprep/no-unused-export` (in `npm run lint`) fails on an unused
 * export the list does not name, and on a listed one that is used or gone until it leaves the list:
 *   node scripts/guards/unused-exports.mjs [REPO_DIR]  the count and every unused export
 *   node scripts/guards/unused-exports.mjs --shrink    drop the listed ones that are used or gone now
 *   node scripts/guards/unused-exports.mjs --record    list every unused export now (see main())
 */
import { statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as prettier from "prettier";
import { isTestFile, moduleFiles, readModule } from "./import-graph.mjs";
import { RATCHET_PATH, readRatchet, REPO } from "./function-limits.mjs";

const DIRS = ["src", "test", "bench", "scripts"];

/** Parsed modules by path, re-read when a file's mtime changes (an editor's ESLint lives long). */
const cache = new Map();

function currentModules(repo) {
  const files = DIRS.flatMap((dir) => moduleFiles(join(repo, dir)));
  const present = new Set(files);
  for (const file of cache.keys()) if (!present.has(file)) cache.delete(file);
  return files.map((file) => {
    const mtime = statSync(file).mtimeMs;
    const hit = cache.get(file);
    if (hit && hit.mtime === mtime) return hit.module;
    const module = readModule(file, repo);
    cache.set(file, { mtime, module });
    return module;
  });
}

/** Whether `file` is a module whose exports must be used: a source under src/, not a test, not the library's entry. */
function checked(file, repo) {
  const rel = relative(repo, file);
  return rel.startsWith("src/") && rel.endsWith(".ts") && !isTestFile(rel) && rel !== "src/index.ts";
}

/**
 * Every unused export of the sources: `{ file, name, type, local }` (repository-relative file;
 * `type` for an interface or type alias; `local` when the file itself uses the name, so it is
 * over-exported rather than dead), sorted by file and name.
 */
export function unusedExports(modules, repo = REPO) {
  const used = new Map();
  const use = (target, name) => (used.get(target) ?? used.set(target, new Set()).get(target)).add(name);
  for (const module of modules)
    for (const { target, names } of module.imports)
      if (target !== module.file) for (const name of names) use(target, name);
  const found = [];
  for (const module of modules) {
    if (!checked(module.file, repo)) continue;
    const names = used.get(module.file) ?? new Set();
    if (names.has("*")) continue;
    for (const { name, type } of module.exports) {
      if (names.has(name)) continue;
      // Used beside its declaration: more than the one mention that declares or re-exports it.
      const mentions = module.text.match(
        new RegExp(`(?<![\\w$])(?<![^.]\\.)${name.replace(/\$/g, "\\$")}(?![\\w$])`, "g"),
      );
      found.push({ file: relative(repo, module.file), name, type, local: (mentions?.length ?? 0) > 1 });
    }
  }
  return found.sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name));
}

/**
 * The unused exports of `repo` now. The rule asks once per linted file; a reading younger than
 * `maxAgeMs` is reused (the import-circle check does the same, eslint-cycles.mjs).
 */
let lastReading = { repo: "", at: -Infinity, found: [] };
export function currentUnusedExports(repo = REPO, maxAgeMs = 0) {
  const now = Date.now();
  if (lastReading.repo === repo && now - lastReading.at <= maxAgeMs) return lastReading.found;
  const found = unusedExports(currentModules(repo), repo);
  lastReading = { repo, at: now, found };
  return found;
}

/** The list's entries that are no longer unused (used now, or gone), as `{ file, name }`. */
export function staleEntries(listed, found) {
  const unused = new Set(found.map((f) => `${f.file}\0${f.name}`));
  return Object.entries(listed).flatMap(([file, names]) =>
    names.filter((name) => !unused.has(`${file}\0${name}`)).map((name) => ({ file, name })),
  );
}

/** The list with the stale entries dropped; never adds one. */
export function shrinkList(listed, found) {
  const stale = new Set(staleEntries(listed, found).map((e) => `${e.file}\0${e.name}`));
  const kept = {};
  for (const [file, names] of Object.entries(listed)) {
    const left = names.filter((name) => !stale.has(`${file}\0${name}`));
    if (left.length) kept[file] = left;
  }
  return kept;
}

/** The names an ESLint Program's top-level export statements give, each with its node (for the location). */
function exportNodes(program) {
  const nodes = new Map();
  for (const statement of program.body) {
    if (statement.type !== "ExportNamedDeclaration") continue;
    for (const specifier of statement.specifiers ?? [])
      nodes.set(specifier.exported.name ?? specifier.exported.value, specifier);
    const declaration = statement.declaration;
    if (!declaration) continue;
    if (declaration.type === "VariableDeclaration") {
      for (const d of declaration.declarations) if (d.id.type === "Identifier") nodes.set(d.id.name, d);
    } else if (declaration.id?.name) nodes.set(declaration.id.name, declaration);
  }
  return nodes;
}

const unusedExportRule = {
  meta: {
    type: "suggestion",
    docs: {
      description:
        "no export under src/ that no other file imports (eslint-ratchet.json's unusedExports lists the old ones)",
    },
    messages: {
      overExported:
        "{{name}} is exported but only {{file}} uses it: drop `export` (no file of src/, test/, bench/ or scripts/ imports it)",
      dead: "{{name}} is exported and used nowhere: delete it, or export it from src/index.ts if it is the library's",
      stale:
        "eslint-ratchet.json lists {{name}} of {{file}} as an unused export, and it is used or gone now: remove the entry (node scripts/guards/unused-exports.mjs --shrink)",
    },
    schema: [
      {
        type: "object",
        properties: { ratchet: { type: "string" }, repo: { type: "string" } },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const repo = context.options[0]?.repo ?? REPO;
    const file = relative(repo, context.filename);
    if (!checked(context.filename, repo)) return {};
    return {
      "Program:exit"(program) {
        const listed = readRatchet(context.options[0]?.ratchet ?? RATCHET_PATH).unusedExports ?? {};
        const found = currentUnusedExports(repo, 5000);
        const allowed = new Set(listed[file] ?? []);
        const nodes = exportNodes(program);
        for (const entry of found.filter((f) => f.file === file && !allowed.has(f.name)))
          context.report({
            node: nodes.get(entry.name) ?? program,
            messageId: entry.local ? "overExported" : "dead",
            data: { name: entry.name, file },
          });
        for (const entry of staleEntries({ [file]: [...allowed] }, found))
          context.report({ loc: program.loc.start, messageId: "stale", data: entry });
      },
    };
  },
};

export const plugin = {
  meta: { name: "gpuprep-unused-exports" },
  rules: { "no-unused-export": unusedExportRule },
};

/** Every unused export by file, as the list holds them. */
function listOf(found) {
  const list = {};
  for (const f of found) (list[f.file] ??= []).push(f.name);
  return list;
}

async function main(args) {
  const repo = resolve(args.find((a) => !a.startsWith("--")) ?? REPO);
  const found = unusedExports(currentModules(repo), repo);
  // --record takes in what is unused now, additions included: only where the guard comes onto a
  // moved base, and the diff of eslint-ratchet.json is then part of the review (as ratchet.mjs --record).
  if (args.includes("--shrink") || args.includes("--record")) {
    const ratchet = readRatchet();
    const unused = args.includes("--record") ? listOf(found) : shrinkList(ratchet.unusedExports ?? {}, found);
    // In prettier's format, so `prettier --check .` in `npm run lint` passes on the file as written.
    const options = { ...(await prettier.resolveConfig(RATCHET_PATH)), filepath: RATCHET_PATH };
    writeFileSync(
      RATCHET_PATH,
      await prettier.format(JSON.stringify({ ...ratchet, unusedExports: unused }), options),
    );
    console.log(`eslint-ratchet.json now lists ${Object.values(unused).flat().length} unused exports`);
    return;
  }
  const local = found.filter((f) => f.local).length;
  console.log(
    `unused exports under src/: ${found.length} (${local} used only in their own file, ${found.length - local} used nowhere; ${found.filter((f) => f.type).length} of them types)`,
  );
  for (const f of found)
    console.log(`  ${f.file} ${f.name}${f.type ? " (type)" : ""}${f.local ? "" : " (dead)"}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main(process.argv.slice(2));
