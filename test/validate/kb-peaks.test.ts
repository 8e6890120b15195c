/**
 * The per-precision peaks of the knowledge base's GPU rows (issue 27): consistent with the dense
 * figures validate already judges by, sparse twice dense where NVIDIA's footnote says so, a shared
 * name carrying only what every variant has, and "not on this architecture" the same for every
 * GPU of a compute capability.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { docsUrl } from "../../src/docs-url.js";
import type { GpuRow, PrecisionPeak } from "../../src/kb/types.js";

const rows = loadKnowledgeBase().data.gpus;
const withPeaks = rows.filter((row) => row.peaks);
const entries = (row: GpuRow) => Object.entries<PrecisionPeak | "not-on-arch">(row.peaks ?? {});

test("most rows carry per-precision peaks, each row citing the evidence file", () => {
  assert.ok(withPeaks.length >= 40, `${withPeaks.length} rows`);
  for (const row of withPeaks)
    assert.ok(
      row.sources.some((source) => source.url === docsUrl("docs/kb-evidence/gpus.md")),
      `${row.name} cites docs/kb-evidence/gpus.md`,
    );
});

test("dense peaks agree with peakTflops; sparse is at most twice dense", () => {
  for (const row of withPeaks) {
    for (const [format, entry] of entries(row)) {
      if (entry === "not-on-arch") continue;
      // 2:4 sparsity at most doubles a rate; Blackwell Ultra's FP4 prints both figures and gains less
      // (B300: 13.5 dense, 18 sparse PFLOPS), so the rule is a range, not 2x.
      if (entry.dense !== null && entry.sparse !== null)
        assert.ok(
          entry.sparse >= entry.dense && entry.sparse <= 2.01 * entry.dense,
          `${row.name} ${format}: ${entry.dense} / ${entry.sparse}`,
        );
      const dense = row.peakTflops[format as keyof GpuRow["peakTflops"]];
      if (dense !== undefined && dense !== null && entry.dense !== null)
        assert.equal(entry.dense, dense, `${row.name} ${format}: peaks and peakTflops agree`);
    }
  }
});

test("'not-on-arch' is the same for every GPU of a compute capability, and never for what peakTflops has", () => {
  const byCc = new Map<string, Map<string, boolean>>();
  for (const row of withPeaks) {
    const seen = byCc.get(row.computeCapability) ?? new Map<string, boolean>();
    byCc.set(row.computeCapability, seen);
    for (const [format, entry] of entries(row)) {
      const absent = entry === "not-on-arch";
      const before = seen.get(format);
      if (before !== undefined)
        assert.equal(absent, before, `${row.name} ${format} at ${row.computeCapability}`);
      seen.set(format, absent);
      if (absent)
        assert.equal(
          row.peakTflops[format as keyof GpuRow["peakTflops"]] ?? null,
          null,
          `${row.name} ${format}`,
        );
    }
  }
  // What the feature matrix relies on: Hopper has FP8 and no block-scaled formats; Blackwell has FP4.
  assert.equal(byCc.get("9.0")?.get("fp8"), false);
  assert.equal(byCc.get("9.0")?.get("nvfp4"), true);
  assert.equal(byCc.get("8.0")?.get("fp8"), true);
  assert.equal(byCc.get("10.0")?.get("fp4"), false);
});

test("a shared name carries a peak only where every variant has the same", () => {
  const byName = new Map(rows.map((row) => [row.name, row]));
  for (const family of withPeaks.filter((row) => row.variants)) {
    const variants = (family.variants ?? []).map((name) => byName.get(name));
    for (const [format, entry] of entries(family))
      for (const variant of variants)
        assert.deepEqual(
          variant?.peaks?.[format as keyof NonNullable<GpuRow["peaks"]>],
          entry,
          `${family.name} ${format} vs ${variant?.name}`,
        );
  }
});
