/**
 * The volatile fields (src/fleet/volatile.ts) change no verdict, and the fast reader that blanks
 * them in a file's text (volatile-text.ts) gives exactly the facts a full read gives:
 * - every real capture, varied as real nodes vary (derive.ts realisticVariation, a new name, a
 *   kernel module build line), diagnoses to the same rules, severities and messages (durations
 *   aside) as the capture itself;
 * - snapshots written compact and indented, varied, with a volatile key where none belongs, read by
 *   readSnapshots equal parseFacts of each file, and share one environment key where they should.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { parseFacts } from "../../src/facts/io.js";
import type { Facts } from "../../src/facts/schema.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { readSnapshots } from "../../src/fleet/snapshots.js";
import { slotsOf, splitVolatileText } from "../../src/fleet/volatile-text.js";
import { captureNames, loadCapture } from "../doctor/captures.js";
import { nodeFrom, realisticVariation, seeded } from "./derive.js";
import { health } from "./scenarios.js";

const kb = loadKnowledgeBase();
const verdicts = (facts: Facts) =>
  diagnose(facts, kb).map((f) => [f.ruleId, f.severity, f.message.replace(/\d+(\.\d+)? ?(ms|s)\b/g, "#")]);

test("no doctor verdict depends on a volatile field: every capture, varied as real nodes vary", () => {
  const names = captureNames();
  assert.ok(names.length >= 20, `only ${names.length} captures`);
  for (const name of names) {
    const capture = loadCapture(name);
    for (const seed of [1, 2]) {
      const varied = nodeFrom(
        capture,
        `node${seed}`,
        realisticVariation(seeded(seed)),
        health("healthy"),
      ).facts!;
      varied.capturedAt = "2027-01-01T00:00:00.000Z";
      assert.deepEqual(verdicts(varied), verdicts(capture), `${name}, seed ${seed}`);
    }
  }
});

test("the fast reader: the same facts as a full read, one key per environment, a stray key read in full", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-volatile-"));
  const h100 = loadCapture("h100-healthy");
  const nodes = [1, 2, 3].map(
    (i) => nodeFrom(h100, `gpu0${i}`, health("healthy"), realisticVariation(seeded(i))).facts!,
  );
  writeFileSync(join(dir, "gpu01.json"), JSON.stringify(nodes[0]));
  writeFileSync(join(dir, "gpu02.json"), JSON.stringify(nodes[1]));
  writeFileSync(join(dir, "gpu03.json"), JSON.stringify(nodes[2], null, 2));
  // A volatile key where none belongs (an environment variable named like one): read in full.
  const stray = structuredClone(nodes[1]!);
  stray.host.hostname = "gpu04";
  stray.target.ref = "gpu04";
  stray.python.env["hostname"] = "not-a-slot";
  writeFileSync(join(dir, "gpu04.json"), JSON.stringify(stray));
  const results = readSnapshots([dir]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["ok", "ok", "ok", "ok"],
  );
  for (const r of results) {
    const full = parseFacts(readFileSync(r.source!, "utf8"), r.source!);
    assert.deepEqual(r.facts, full, `${r.node}: the fast path's facts equal the full read's`);
  }
  assert.equal(results[0]?.contentKey, results[1]?.contentKey, "one environment, one key");
  assert.notEqual(
    results[0]?.contentKey,
    results[3]?.contentKey,
    "a different environment (an extra variable)",
  );
  // The blanked text of two varied nodes is the same; the stray file's slots are not all known ones.
  const text = (i: number) => readFileSync(join(dir, `gpu0${i}.json`), "utf8");
  assert.equal(splitVolatileText(text(1))?.stable, splitVolatileText(text(2))?.stable);
  assert.ok(slotsOf(JSON.parse(text(1))));
  assert.equal(slotsOf(JSON.parse(text(4))), null);
});
