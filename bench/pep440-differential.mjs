// The PEP 440 / PEP 508 differential at scale: src/util against Python's `packaging` on a
// million version/specifier pairs and more (the corpus of bench/pep440-corpus.ts; the test
// src/util/pep440-differential.test.ts runs 125,000 of them with a fixed seed on every `npm test`).
//
// 1,250,000 generated pairs by default: about 1,000,000 where both the version and the set are
// valid (the others are judged as versions and sets that packaging refuses). Batches of 100,000
// pairs (with 25,000 orderings, 2,000 filters, 10,000 requirement strings and 10,000 markers
// each), batch i drawn with seed SEED + i; each batch's questions go to `processes`
// Python processes at once (bench/pep440_reference.py) while src/util answers them here. Reports
// what was compared, the mismatches (the first few printed), and the time src/util took beside
// the wall time of the whole run.
//
// Usage: npm run build && node bench/pep440-differential.mjs [PAIRS=1250000] [SEED=1]
//          [--python /usr/bin/python3] [--processes N]
// Another Python (another packaging) is a comparison, not the reference: with pyenv's packaging
// 26.2 the mismatches are where packaging changed since 23.0.
import { availableParallelism } from "node:os";
import { buildCorpus } from "../dist/bench/pep440-corpus.js";
import { describeMismatches, runBatch } from "../dist/bench/pep440-differential-run.js";

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return value;
}
const python = option("--python", "/usr/bin/python3");
const processes = Number(option("--processes", String(Math.min(4, availableParallelism()))));
const PAIRS = Number(args[0] ?? 1_250_000);
const SEED = Number(args[1] ?? 1);
const BATCH = 100_000;

const totals = { compared: {}, mismatches: [], mismatchCount: 0, acceptedRaises: 0, mineMs: 0 };
let packagingVersion = "?";
const started = performance.now();
for (let i = 0; i * BATCH < PAIRS; i++) {
  const pairs = Math.min(BATCH, PAIRS - i * BATCH);
  const scale = pairs / BATCH;
  const requests = buildCorpus(SEED + i, {
    pairs,
    orderings: Math.round(25_000 * scale),
    filters: Math.round(2_000 * scale),
    requirements: Math.round(10_000 * scale),
    markers: Math.round(10_000 * scale),
  });
  const result = await runBatch(python, requests, processes);
  packagingVersion = result.packagingVersion;
  for (const [kind, n] of Object.entries(result.compared))
    totals.compared[kind] = (totals.compared[kind] ?? 0) + n;
  totals.mismatchCount += result.mismatches.length;
  if (totals.mismatches.length < 20) totals.mismatches.push(...result.mismatches.slice(0, 20));
  totals.acceptedRaises += result.acceptedRaises;
  totals.mineMs += result.mineMs;
  process.stderr.write(
    `batch ${i + 1} (seed ${SEED + i}): ${result.mismatches.length} mismatches, ${Math.round(result.wallMs)} ms\n`,
  );
}
const wallS = (performance.now() - started) / 1000;

const byKind = {};
for (const m of totals.mismatches) byKind[m.request.k] = (byKind[m.request.k] ?? 0) + 1;
console.log(
  `python: ${python} (packaging ${packagingVersion}), ${processes} processes, seeds ${SEED}..${SEED + Math.ceil(PAIRS / BATCH) - 1}`,
);
console.log(
  `compared: ${totals.compared.c ?? 0} version/specifier pairs (x3 pre-release modes), ${totals.compared.o ?? 0} orderings, ` +
    `${totals.compared.f ?? 0} filters, ${totals.compared.v ?? 0} versions, ${totals.compared.s ?? 0} specifier sets, ` +
    `${totals.compared.r ?? 0} requirements, ${totals.compared.m ?? 0} markers`,
);
console.log(
  `mismatches: ${totals.mismatchCount}; raises of packaging accepted (hash order, unreadable normal forms): ${totals.acceptedRaises}`,
);
console.log(
  `time: src/util answered in ${(totals.mineMs / 1000).toFixed(1)} s; whole run ${wallS.toFixed(1)} s wall`,
);
if (totals.mismatchCount > 0) {
  console.log(`first mismatches (${JSON.stringify(byKind)} among the first ${totals.mismatches.length}):`);
  console.log(describeMismatches(totals.mismatches, 10));
  process.exitCode = 1;
}
