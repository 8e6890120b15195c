// Is an npm PEP 440 library equal to packaging? The differential corpus's version questions
// (bench/pep440-corpus.ts) asked of @renovatebot/pep440 instead of src/util: validity and
// normal form, ordering, and specifier-set containment in packaging's three pre-release modes
// (renovate's satisfies with {prereleases: true}, {prereleases: false} and no option).
// The library is not a dependency of gpuprep: install it anywhere and pass its directory.
//
// Usage: npm run build && (cd /tmp/lib && npm install @renovatebot/pep440@4)
//        node bench/pep440-library-check.mjs /tmp/lib/node_modules/@renovatebot/pep440 [PAIRS=100000] [SEED=1]
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { buildCorpus } from "../dist/bench/pep440-corpus.js";
import { referenceAnswers } from "../dist/bench/pep440-differential-run.js";

const [dir, pairsArg, seedArg] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node bench/pep440-library-check.mjs DIR_OF_@renovatebot/pep440 [PAIRS] [SEED]");
  process.exit(2);
}
const lib = createRequire(import.meta.url)(dir);
const version = createRequire(import.meta.url)(`${dir}/package.json`).version;
const PAIRS = Number(pairsArg ?? 100_000);
const requests = buildCorpus(Number(seedArg ?? 1), {
  pairs: PAIRS,
  orderings: PAIRS / 4,
  filters: 0,
  requirements: 0,
  markers: 0,
});

/** The library's answer in bench/pep440_reference.py's format; undefined where it has none to compare. */
function libraryAnswer(request) {
  try {
    switch (request.k) {
      case "v": {
        const valid = lib.valid(request.v);
        return valid === null ? null : lib.clean(request.v);
      }
      case "c":
        if (lib.valid(request.v) === null || !lib.validRange(request.s)) return "skip";
        return [{}, { prereleases: true }, { prereleases: false }].map((o) =>
          lib.satisfies(request.v, request.s, o),
        );
      case "o":
        if (lib.valid(request.a) === null || lib.valid(request.b) === null) return "skip";
        return Math.sign(lib.compare(request.a, request.b));
      default:
        return undefined;
    }
  } catch (error) {
    return `threw ${error.message}`;
  }
}

const lines = await referenceAnswers("/usr/bin/python3", requests, Math.min(4, availableParallelism()));
const counts = {};
const examples = {};
requests.forEach((request, i) => {
  const mine = libraryAnswer(request);
  if (mine === undefined) return;
  let theirs = JSON.parse(lines[i + 1]);
  if (request.k === "v" && Array.isArray(theirs)) theirs = theirs[0];
  const key = request.k;
  counts[key] ??= { compared: 0, differ: 0 };
  counts[key].compared++;
  if (JSON.stringify(mine) === JSON.stringify(theirs)) return;
  counts[key].differ++;
  (examples[key] ??= []).push(
    `${JSON.stringify(request)}: library ${JSON.stringify(mine)}, packaging ${JSON.stringify(theirs)}`,
  );
});
console.log(`@renovatebot/pep440 ${version} against packaging ${JSON.parse(lines[0])}:`);
for (const [kind, { compared, differ }] of Object.entries(counts)) {
  console.log(`  ${kind}: ${differ} of ${compared} differ`);
  for (const line of (examples[kind] ?? []).slice(0, 4)) console.log(`    ${line}`);
}
