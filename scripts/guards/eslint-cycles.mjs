/**
 * No import circle under src/ (issue 23, "Done when"): the import graph of the sources
 * (scripts/guards/import-graph.mjs, read with the TypeScript parser) is split into strongly
 * connected components; a file in a circle that eslint-ratchet.json's `importCircles` does not
 * list is an error on that file. The circles there were present when the guard came in and may
 * only go: one that gained a file is an error, one that lost a file or is gone is an error until
 * its entry is updated (`node scripts/guards/ratchet.mjs --shrink`).
 */
import { statSync } from "node:fs";
import { join, relative } from "node:path";
import { importCircles, isTestFile, moduleFiles, readModule } from "./import-graph.mjs";
import { RATCHET_PATH, readRatchet, REPO } from "./function-limits.mjs";

/** Parsed modules by path, re-read when a file's mtime changes (an editor's ESLint lives long). */
const cache = new Map();

function currentModules(repo) {
  const files = moduleFiles(join(repo, "src")).filter((f) => f.endsWith(".ts") && !isTestFile(f));
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

/**
 * The circles among the sources of `repo` now, each a sorted list of repository-relative paths.
 * The rule asks once per linted file; a reading younger than `maxAgeMs` is reused (400 files
 * times a fresh graph cost 7 s of a lint run; a reading a few seconds old is as good, in an editor too).
 */
let lastReading = { repo: "", at: -Infinity, circles: [] };
export function sourceCircles(repo = REPO, maxAgeMs = 0) {
  const now = Date.now();
  if (lastReading.repo === repo && now - lastReading.at <= maxAgeMs) return lastReading.circles;
  const circles = readCircles(repo);
  lastReading = { repo, at: now, circles };
  return circles;
}

function readCircles(repo) {
  return importCircles(
    currentModules(repo),
    repo,
    (f) => f.startsWith(join(repo, "src") + "/") && !isTestFile(f),
  );
}

const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * What the ratchet says of the circle `found` (or of a listed circle no longer found): "new" (not
 * listed, nor part of a listed one), "grew", "shrank", or undefined (as listed).
 */
export function judgeCircle(found, listed) {
  const overlapping = listed.find((c) => c.some((f) => found.includes(f)));
  if (!overlapping) return "new";
  if (sameSet(found, overlapping)) return undefined;
  return found.every((f) => overlapping.includes(f)) ? "shrank" : "grew";
}

const cyclesRule = {
  meta: {
    type: "problem",
    docs: {
      description: "no import circle among the sources under src/ (eslint-ratchet.json lists the old ones)",
    },
    messages: {
      new: "{{file}} is in an import circle: {{circle}}. Move what both sides need into a module below them",
      grew: "the import circle {{circle}} grew past its entry in eslint-ratchet.json (the list only shrinks)",
      shrank:
        "the import circle listed as {{listed}} is now {{circle}}: update eslint-ratchet.json (node scripts/guards/ratchet.mjs --shrink)",
      gone: "the import circle {{listed}} is gone: remove it from eslint-ratchet.json (node scripts/guards/ratchet.mjs --shrink)",
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
    if (!file.startsWith("src/") || isTestFile(file)) return {};
    return {
      "Program:exit"(program) {
        const listed = readRatchet(context.options[0]?.ratchet ?? RATCHET_PATH).importCircles ?? [];
        const circles = sourceCircles(repo, 5000);
        const mine = circles.find((c) => c.includes(file));
        if (mine) {
          const verdict = judgeCircle(mine, listed);
          const overlapping = listed.find((c) => c.some((f) => mine.includes(f)));
          if (verdict)
            context.report({
              loc: program.loc.start,
              messageId: verdict,
              data: { file, circle: mine.join(" -> "), listed: overlapping?.join(" -> ") ?? "" },
            });
          return;
        }
        // A listed circle this file was in and no circle holds it now: report once, on its first file.
        for (const entry of listed)
          if (
            entry.includes(file) &&
            !circles.some((c) => c.some((f) => entry.includes(f))) &&
            entry[0] === file
          )
            context.report({
              loc: program.loc.start,
              messageId: "gone",
              data: { listed: entry.join(" -> ") },
            });
      },
    };
  },
};

export default { meta: { name: "gpuprep-import-cycles" }, rules: { "no-import-cycle": cyclesRule } };
