/**
 * memory.py's in-process search for the largest batch (BatchSearch), run in a real Python (the
 * search and the allocator model are stdlib only) on traced steps made here: allocations whose
 * sizes are affine in the batch, as a model's are, and one that is not. Each answer is checked
 * against replaying every batch of the range, and the number of traces it took is counted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MEMORY_DIR = fileURLToPath(new URL("../../src/memory/", import.meta.url));

interface Outcome {
  maxBatch: number | null;
  truth: number | null;
  /** Without the safety share: where --measure starts. */
  likelyMaxBatch: number | null;
  likelyTruth: number | null;
  traced: number[];
  verified: boolean;
  interpolatedFrom: number[] | null;
  points: { batch: number; interpolated: number[] | null }[];
}

/**
 * A step of a 24-layer model at batch b: 200 MiB of weights, 400 MiB of optimizer state, per layer
 * an activation of b x 3 MiB kept for backward, a gradient of the same size in backward, then the
 * weights' gradients and the optimizer's temporaries. Batch 1 squeezes a dimension: one allocation
 * fewer (as real models take other paths at batch 1). From batch `extraFrom` on, every layer also
 * keeps a 5 MiB buffer: an allocation the batches below do not have (not affine).
 */
function search(usableMiB: number, extraFrom: number | null = null) {
  const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
MIB = 2 ** 20
def step(b):
    ev, n = [], [0]
    def a(raw):
        n[0] += 1
        ev.append(("a", n[0], (raw + 511) // 512 * 512, raw))
        return n[0]
    def f(k):
        ev.append(("f", k))
    a(200 * MIB)
    marks = {"params": len(ev)}
    a(400 * MIB)
    marks["state"] = len(ev)
    acts = [a(b * 3 * MIB + 1000) for _ in range(24)]
    if b > 1:
        acts.append(a(b * 4096))
    extra = ${extraFrom ?? "None"}
    if extra is not None and b >= extra:
        acts += [a(5 * MIB) for _ in range(24)]
    loss = a(4)
    for k in reversed(acts):
        t = a(b * 3 * MIB + 1000)
        f(t)
        f(k)
    g = a(200 * MIB)
    f(loss)
    marks["opt"] = len(ev)
    t = a(200 * MIB)
    f(t)
    f(g)
    marks["step"] = len(ev)
    return {"batch": b, "events": ev, "ops": {}, "marks": marks, "peak": memory.running_peak(ev),
            "breakdown": {"parameters": 200 * MIB, "gradients": 0, "optimizerState": 400 * MIB,
                          "activations": 72 * b * MIB, "temporaries": 0}, "convolutionBytes": 0, "seconds": 0}
traced = []
def step_at(b):
    traced.append(b)
    return step(b)
replayer = memory.Replayer({}, "train", [], "cuda")
budget = {"min": 1, "max": 1024, "usableBytes": ${usableMiB} * MIB, "contextBytes": 500 * MIB,
          "safetyFraction": 0.035, "convolutionFraction": 0.22, "curve": [1, 2, 4, 8]}
found = memory.BatchSearch(step_at, replayer, budget).run(step_at(1))
def largest(plan):
    fits = [b for b in range(1, 1025) if memory.Replayer.total(replayer.point(step(b)), plan) <= budget["usableBytes"]]
    return max(fits) if fits else None
print(json.dumps(dict(found, truth=largest(budget), likelyTruth=largest(dict(budget, safetyFraction=0.0)), traced=traced)))`;
  const run = spawnSync("python3", ["-c", script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Outcome;
}

test("two traces at adjacent batches give every other batch: the answer in four traces, checked by the last", () => {
  const found = search(40_000);
  assert.ok(found.truth !== null && found.truth > 100 && found.truth < 1024, `truth ${found.truth}`);
  assert.equal(found.maxBatch, found.truth);
  // Batch 1 takes another path (one allocation fewer), so the pair is 2 and 3.
  assert.deepEqual(found.interpolatedFrom, [2, 3]);
  assert.deepEqual(found.traced, [1, 2, 3, found.truth]);
  assert.equal(found.verified, true);
  // Without the 3.5 % safety share more fits: where the measured search starts.
  assert.equal(found.likelyMaxBatch, found.likelyTruth);
  assert.ok((found.likelyMaxBatch as number) > found.truth, `${found.likelyMaxBatch} > ${found.truth}`);
  // The answer's neighbour and the chart's batches are reported, interpolated.
  const next = found.points.find((p) => p.batch === (found.maxBatch as number) + 1);
  assert.deepEqual(next?.interpolated, [2, 3]);
  assert.ok([4, 8].every((b) => found.points.some((p) => p.batch === b)));
});

test("the whole range fits, or not even the smallest batch: the range's end, or none", () => {
  const all = search(10 ** 7);
  assert.equal(all.maxBatch, 1024);
  assert.equal(all.truth, 1024);
  const none = search(100);
  assert.equal(none.maxBatch, null);
  assert.equal(none.truth, null);
  assert.deepEqual(none.traced, [1, 2, 3]);
});

test("where an allocation appears with the batch, the traced answer disagrees and real traces decide", () => {
  const found = search(40_000, 200);
  assert.ok(found.truth !== null && found.truth >= 200, `truth ${found.truth}`);
  assert.equal(found.verified, false);
  assert.equal(found.interpolatedFrom, null);
  assert.equal(found.maxBatch, found.truth);
  assert.ok(found.traced.length <= 12, `traced ${found.traced.join(", ")}`);
  assert.ok(found.points.every((p) => p.interpolated === null));
});
