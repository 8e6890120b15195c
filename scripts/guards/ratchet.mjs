#!/usr/bin/env node
/**
 * The ratchet of eslint-ratchet.json, checked in `npm run lint` by the ESLint rules
 * `gpuprep/function-limits` (functions over 60 lines or complexity 15) and `gpuprep/no-import-cycle`
 * (import circles under src/):
 *   node scripts/guards/ratchet.mjs [REPO_DIR]    counts, every function over a limit (largest first), the circles
 *   node scripts/guards/ratchet.mjs --shrink      lower entries to what the code measures now and drop the
 *                                                 fixed ones; never adds or raises one
 *   node scripts/guards/ratchet.mjs --record      write what the code measures now, additions included: only
 *                                                 for the merge that brings the guard onto a moved base, and the
 *                                                 diff of eslint-ratchet.json is then part of the review
 */
import { writeFileSync } from "node:fs";
import * as prettier from "prettier";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { countsOf, LIMITS, measureFiles, RATCHET_PATH, readRatchet, REPO } from "./function-limits.mjs";
import { sourceCircles, judgeCircle } from "./eslint-cycles.mjs";
import { isTestFile, moduleFiles } from "./import-graph.mjs";

export function sourceFiles(repo) {
  return moduleFiles(join(repo, "src")).filter((f) => f.endsWith(".ts") && !isTestFile(f));
}

/** The ratchet with every entry lowered to `measured` and the fixed ones removed (circles too). */
export function shrink(ratchet, measured, circles) {
  const functions = {};
  for (const [file, entries] of Object.entries(ratchet.functions))
    for (const [name, sizes] of Object.entries(entries))
      for (const [metric, listed] of Object.entries(sizes)) {
        const now = measured[file]?.[name]?.[metric];
        if (now === undefined) continue;
        ((functions[file] ??= {})[name] ??= {})[metric] = Math.min(now, listed);
      }
  // A listed circle is kept as it is now where it shrank; a new or grown one is not taken in.
  const importCircles = circles
    .filter((c) => judgeCircle(c, ratchet.importCircles ?? []) !== "new")
    .filter((c) => judgeCircle(c, ratchet.importCircles ?? []) !== "grew");
  return { ...ratchet, functions, importCircles };
}

async function main(args) {
  const write = async (ratchet) => {
    // In prettier's format, so `prettier --check .` in `npm run lint` passes on the file as written.
    const options = { ...(await prettier.resolveConfig(RATCHET_PATH)), filepath: RATCHET_PATH };
    writeFileSync(RATCHET_PATH, await prettier.format(JSON.stringify(ratchet), options));
    console.log(
      `eslint-ratchet.json now lists: ${JSON.stringify(countsOf(ratchet.functions))}, ${ratchet.importCircles.length} import circles`,
    );
  };
  if (args.includes("--shrink"))
    return write(shrink(readRatchet(), measureFiles(sourceFiles(REPO)), sourceCircles(REPO)));
  if (args.includes("--record"))
    return write({
      ...readRatchet(),
      functions: measureFiles(sourceFiles(REPO)),
      importCircles: sourceCircles(REPO),
    });
  const repo = resolve(args[0] ?? REPO);
  const measured = measureFiles(sourceFiles(repo), repo);
  const counts = countsOf(measured);
  console.log(`functions over ${LIMITS.lines} lines: ${counts.overLines} (over 100: ${counts.over100Lines})`);
  console.log(`functions over complexity ${LIMITS.complexity}: ${counts.overComplexity}`);
  const rows = Object.entries(measured).flatMap(([file, found]) =>
    Object.entries(found).map(([name, sizes]) => ({ file, name, ...sizes })),
  );
  rows.sort((a, b) => (b.lines ?? 0) - (a.lines ?? 0) || (b.complexity ?? 0) - (a.complexity ?? 0));
  for (const r of rows)
    console.log(
      `  ${r.file} ${r.name}: ${[r.lines && `${r.lines} lines`, r.complexity && `complexity ${r.complexity}`].filter(Boolean).join(", ")}`,
    );
  const circles = sourceCircles(repo);
  console.log(`import circles under src/: ${circles.length}`);
  for (const c of circles) console.log(`  ${c.join(" -> ")}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main(process.argv.slice(2));
