/**
 * src/util's PEP 440 and PEP 508 against Python's own `packaging` (Debian's python3-packaging 23.0
 * for /usr/bin/python3): one generated corpus with fixed seeds (bench/pep440-corpus.ts), every
 * question asked of both, every answer compared. Over 100,000 version/specifier pairs in all three
 * pre-release modes, version orderings, filters, and over 10,000 requirement strings and markers.
 * A mismatch prints the first differing cases. bench/pep440-differential.mjs runs the same over a
 * million pairs and more.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { buildCorpus } from "../../bench/pep440-corpus.js";
import { describeMismatches, runBatch } from "../../bench/pep440-differential-run.js";
import { PYTHON3_PACKAGING, needs } from "../../test/support/needs.js";

const PYTHON = "/usr/bin/python3";
/** Fixed: the same corpus on every run, so a failure reproduces (the bench varies the seed). */
const SEED = 440;
const SIZES = { pairs: 125_000, orderings: 30_000, filters: 2_000, requirements: 12_000, markers: 12_000 };

test("PEP 440 and PEP 508 answers equal packaging's on the generated corpus", async (t) => {
  if (needs(t, PYTHON3_PACKAGING)) return;
  const requests = buildCorpus(SEED, SIZES);
  const result = await runBatch(PYTHON, requests, Math.min(4, availableParallelism()));
  t.diagnostic(
    `packaging ${result.packagingVersion}: ${JSON.stringify(result.compared)} compared in ${Math.round(result.wallMs)} ms, ` +
      `${result.mismatches.length} mismatches, ${result.acceptedRaises} raises of packaging accepted (hash order, unreadable normal forms)`,
  );
  assert.equal(
    result.packagingVersion,
    "23.0",
    "the corpus is judged against Debian bookworm's packaging 23.0",
  );
  assert.deepEqual(
    result.mismatches.length,
    0,
    `${result.mismatches.length} answers differ from packaging's; the first:\n${describeMismatches(result.mismatches)}`,
  );
  assert.ok(
    (result.compared["c"] ?? 0) >= 100_000,
    `only ${result.compared["c"]} valid version/specifier pairs`,
  );
  assert.ok((result.compared["o"] ?? 0) >= 20_000, `only ${result.compared["o"]} orderings`);
  assert.ok((result.compared["r"] ?? 0) >= 10_000 && (result.compared["m"] ?? 0) >= 10_000);
});
