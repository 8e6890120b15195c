/**
 * memory.py's model of torch's caching allocator, run in a real Python (it is stdlib only): the
 * rules of c10/cuda/CUDACachingAllocator.cpp it claims, each with a sequence whose reserve follows
 * from them. On the H100 it matched the real peak reserved of 13 real runs, replayed from their own
 * allocation history, within 0.52 % (docs/reports/memory-fit-h100.jsonl, allocatorCheck).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MEMORY_DIR = fileURLToPath(new URL("../../src/memory/", import.meta.url));
const MIB = 2 ** 20;

/** Replays the events in memory.py's AllocatorModel; returns [reserved, peakReserved, allocated, peakAllocated, oom]. */
function replay(events: (["a", number, number] | ["f", number])[], options = "") {
  const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
m = memory.replay([tuple(e) for e in json.loads(sys.argv[1])]${options})
print(json.dumps([m.reserved, m.peak_reserved, m.allocated, m.peak_allocated, m.oom]))`;
  const run = spawnSync("python3", ["-c", script, JSON.stringify(events)], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as [number, number, number, number, boolean];
}

test("small requests share a 2 MiB segment, rounded to 512 B blocks", () => {
  const [reserved, , allocated] = replay([
    ["a", 1, 100],
    ["a", 2, 1000],
    ["a", 3, 1024 * 1024],
  ]);
  assert.equal(allocated, 512 + 1024 + MIB);
  assert.equal(reserved, 2 * MIB);
});

test("1-10 MiB requests take 20 MiB segments and split them; larger ones get their size in 2 MiB steps", () => {
  const [reserved] = replay([
    ["a", 1, 3 * MIB],
    ["a", 2, 5 * MIB],
    ["a", 3, 13 * MIB + 1], // the segment's 12 MiB rest is too small: a new 14 MiB segment
    ["a", 4, 11 * MIB], // fits the 12 MiB rest: no new segment
  ]);
  assert.equal(reserved, 20 * MIB + 14 * MIB);
});

test("a freed block is reused best-fit and neighbours merge; a large rest of 1 MiB or less is not split off", () => {
  // 12 MiB segment, freed; a 11.5 MiB request reuses it whole (the 0.5 MiB rest stays with the block).
  const [reserved, , allocated] = replay([
    ["a", 1, 12 * MIB],
    ["f", 1],
    ["a", 2, 11.5 * MIB],
  ]);
  assert.equal(reserved, 12 * MIB);
  assert.equal(allocated, 12 * MIB);
  // Two 10 MiB blocks of one 20 MiB segment, both freed, merge: a 20 MiB request needs no new segment.
  const [merged] = replay([
    ["a", 1, 30 * MIB],
    ["f", 1],
    ["a", 2, 10 * MIB],
    ["a", 3, 10 * MIB],
    ["f", 2],
    ["f", 3],
    ["a", 4, 30 * MIB],
  ]);
  assert.equal(merged, 30 * MIB);
});

test("fragmentation: a hole too small for the next request costs a new segment", () => {
  const [reserved, peak] = replay([
    ["a", 1, 40 * MIB],
    ["f", 1],
    ["a", 2, 30 * MIB], // split: 30 used, 10 free
    ["a", 3, 20 * MIB], // the 10 MiB rest cannot hold it
  ]);
  assert.equal(reserved, 60 * MIB);
  assert.equal(peak, 60 * MIB);
});

test("out of memory: cached free segments are released before giving up", () => {
  const capacity = ", capacity=64 * 2 ** 20";
  const [reserved, , , , oom] = replay(
    [
      ["a", 1, 40 * MIB],
      ["f", 1],
      ["a", 2, 50 * MIB],
    ],
    capacity,
  );
  assert.equal(oom, false);
  assert.equal(reserved, 50 * MIB);
  const [, , , , full] = replay([["a", 1, 70 * MIB]], capacity);
  assert.equal(full, true);
});

test("expandable_segments: one growing segment per pool in 20 MiB pages, no 20 MiB segment per small-large request", () => {
  const events: ["a", number, number][] = [
    ["a", 1, 3 * MIB],
    ["a", 2, 5 * MIB],
    ["a", 3, 30 * MIB],
  ];
  const [plain] = replay(events);
  const [expandable] = replay(events, ", expandable=True");
  assert.equal(plain, 20 * MIB + 30 * MIB);
  assert.equal(expandable, 40 * MIB); // 38 MiB in 20 MiB pages
});
