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

/** memory.py's accumulate_in_place on a traced event list and its ops; returns the events it gives back. */
function accumulate(events: unknown[][], ops: Record<number, [string, boolean, number[]]>) {
  const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
ops = {int(k): tuple(v) for k, v in json.loads(sys.argv[2]).items()}
print(json.dumps(memory.accumulate_in_place([tuple(e) for e in json.loads(sys.argv[1])], ops)))`;
  const run = spawnSync("python3", ["-c", script, JSON.stringify(events), JSON.stringify(ops)], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as unknown[][];
}

test("a backward add whose first input is freed right after is autograd's in-place accumulation: one buffer", () => {
  // grad 1 made, a second gradient added out of place on fake tensors (2 = 1 + x), 1 freed, later 2 freed.
  const events = [
    ["a", 1, 4 * MIB],
    ["a", 2, 4 * MIB],
    ["f", 1],
    ["f", 2],
  ];
  const out = accumulate(events, { 1: ["aten.add.Tensor", true, [1]] });
  assert.deepEqual(out, [["a", 1, 4 * MIB], ["n"], ["n"], ["f", 1]]);
  const [, peak] = replay(out.filter((e) => e[0] !== "n") as (["a", number, number] | ["f", number])[]);
  assert.equal(peak, 20 * MIB); // one 4 MiB block in one 20 MiB segment, not two
});

test("an add in forward, of another size, or whose input stays live is kept as traced", () => {
  const events = [
    ["a", 1, 4 * MIB],
    ["a", 2, 4 * MIB],
    ["f", 1],
    ["f", 2],
  ];
  const kept = [
    ["a", 1, 4 * MIB],
    ["a", 2, 4 * MIB],
    ["f", 1],
    ["f", 2],
  ];
  assert.deepEqual(accumulate(events, { 1: ["aten.add.Tensor", false, [1]] }), kept);
  assert.deepEqual(accumulate(events, { 1: ["aten.mul.Tensor", true, [1]] }), kept);
  assert.deepEqual(accumulate(events, { 1: ["aten.add.Tensor", true, [7]] }), kept);
  const resized = [
    ["a", 1, 2 * MIB],
    ["a", 2, 4 * MIB],
    ["f", 1],
    ["f", 2],
  ];
  assert.deepEqual(accumulate(resized, { 1: ["aten.add.Tensor", true, [1]] }), [
    ["a", 1, 2 * MIB],
    ["a", 2, 4 * MIB],
    ["f", 1],
    ["f", 2],
  ]);
});

/** A real run's history (test/memory/fixtures/history-*.json.gz): the model's peak reserve and the real one. */
function replayHistory(name: string, upward: boolean) {
  const fixture = fileURLToPath(new URL(`../../../test/memory/fixtures/${name}`, import.meta.url));
  const script = `import sys, json, gzip; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
class Upward(memory.AllocatorModel):
    def _grow(self, size, small):
        want = self.segment_size(size)
        self.next_addr += want + (1 << 30)
        self._reserve(want)
        return memory._Block(self.next_addr, want, small)
rows = json.load(gzip.open(sys.argv[1], "rt"))["rows"]
model = Upward() if sys.argv[2] == "up" else memory.AllocatorModel()
held = peak = 0
for action, address, size in rows:
    if action == "alloc":
        model.malloc(address, size)
    elif action == "free_completed":
        model.free(address)
    elif action == "segment_alloc":
        held += size
        peak = max(peak, held)
print(json.dumps([model.peak_reserved, peak]))`;
  const run = spawnSync("python3", ["-c", script, fixture, upward ? "up" : "down"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as [number, number];
}

test("on real runs' own histories the model reserves what the allocator did: new segments come below the last", () => {
  // Pythia-410M's shape on an H100: with segment addresses growing upward the model took the other
  // of two freed 3,144 MiB segments and reserved +10.06 % (batch 16) and -5.72 % (batch 4).
  for (const name of ["history-pythia410m-b16-h100.json.gz", "history-pythia410m-b4-h100.json.gz"]) {
    const [model, real] = replayHistory(name, false);
    assert.equal(model, real, name);
  }
  const [up16, real16] = replayHistory("history-pythia410m-b16-h100.json.gz", true);
  assert.equal(up16 - real16, 3144 * MIB);
});
