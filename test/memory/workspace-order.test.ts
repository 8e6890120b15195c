/**
 * memory.py's replay order of a traced step, in a real Python (stdlib only): where the cuBLAS and
 * cuBLASLt workspaces are taken (each thread's first matmul, not before the step) and where the
 * optimizer's state is created (inside the first optimizer step, after backward), and the peak
 * reserve this order gives on two real captures against the real run's own allocator history.
 * The captures: docs/reports/memory-kernels-call2-events-h100.tgz, made on an H100 by
 * bench/device/memory-kernel-transients.sh (docs/reports/memory-kernels-h100.md, call 2): each
 * cell's traced order (after/events/ID.trace.json) and its real run's allocator history
 * (after/events/ID.real.json, torch.cuda.memory._record_memory_history during 3 steps + eval).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MEMORY_DIR = fileURLToPath(new URL("../../src/memory/", import.meta.url));
const CAPTURES = fileURLToPath(
  new URL("../../../docs/reports/memory-kernels-call2-events-h100.tgz", import.meta.url),
);
const MIB = 2 ** 20;
const BLAS = 32 * MIB;
const LT = MIB;
const WORKSPACES = [BLAS, LT, BLAS, LT];

function python<T>(body: string, input: unknown): T {
  const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
data = json.loads(sys.argv[1])
${body}`;
  const run = spawnSync("python3", ["-c", script, JSON.stringify(input)], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as T;
}

type Op = [string, boolean, number[]];

/** step_sequence on a traced step: "KIND KEY" rows, the keys printed as Python writes them. */
function sequence(
  events: unknown[][],
  ops: Record<number, Op>,
  marks: Record<string, number>,
  steps = 2,
): string[] {
  return python<string[]>(
    `seq = memory.step_sequence([tuple(e) for e in data["events"]], data["marks"], data["steps"], data["ws"],
    {int(k): tuple(v) for k, v in data["ops"].items()})
print(json.dumps(["%s %r" % (e[0], e[1]) for e in seq]))`,
    { events, ops, marks, steps, ws: WORKSPACES },
  );
}

// A traced training step: one weight (key 1), its state (2, 3: exp_avg, exp_avg_sq), then the step
// from index 3: input (4), forward addmm output (5), loss (6), backward mm output (7, the weight's
// gradient), then the optimizer's foreach temporary (8) freed, and the gradient freed by zero_grad.
const EVENTS = [
  ["a", 1, 4 * MIB],
  ["a", 2, 4 * MIB],
  ["a", 3, 4 * MIB],
  ["a", 4, 2 * MIB],
  ["a", 5, 8 * MIB],
  ["a", 6, 512],
  ["a", 7, 4 * MIB],
  ["f", 5],
  ["a", 8, 4 * MIB],
  ["f", 8],
  ["f", 7],
  ["f", 4],
  ["f", 6],
];
const MARKS = { params: 1, state: 3, opt: 8, step: 13 };

test("the first step takes each thread's cuBLAS workspace at its first matmul, the state at the optimizer's step", () => {
  const ops: Record<number, Op> = {
    4: ["aten.addmm.default", false, []],
    6: ["aten.mm.default", true, []],
    8: ["aten._foreach_sqrt.default", false, []],
  };
  const rows = sequence(EVENTS, ops, MARKS);
  const first = rows.slice(0, 15);
  assert.deepEqual(first, [
    "a 1", // the weight
    "a (1, 4)", // step 1: the input
    "a (1, 5)", // the forward's first addmm: its output, then its thread's cuBLAS and cuBLASLt workspaces
    "a ('workspace', 0)",
    "a ('workspace', 1)",
    "a (1, 6)",
    "a (1, 7)", // backward's first mm: autograd's thread takes its own cuBLAS workspace, no cuBLASLt (no fused bias)
    "a ('workspace', 2)",
    "f (1, 5)",
    "a 2", // the optimizer's state, created lazily inside its first step(), after backward
    "a 3",
    "a (1, 8)",
    "f (1, 8)",
    "f (1, 7)",
    "f (1, 4)",
  ]);
  // Step 2 takes no workspace and creates no state: the handles and the state are kept.
  const second = rows.slice(16);
  assert.equal(second.length, 10);
  assert.ok(second.every((row) => row.slice(2).startsWith("(2, ")));
});

test("a thread with no matmul the trace can see keeps its workspaces before the step (the cautious side)", () => {
  const ops: Record<number, Op> = {
    4: ["aten.convolution.default", false, []],
    6: ["aten.mm.default", true, []],
  };
  const rows = sequence(EVENTS, ops, MARKS, 1);
  assert.deepEqual(rows.slice(0, 4), ["a 1", "a ('workspace', 0)", "a ('workspace', 1)", "a (1, 4)"]);
  assert.ok(rows.indexOf("a ('workspace', 2)") === rows.indexOf("a (1, 7)") + 1);
  assert.equal(rows.filter((r) => r.includes("workspace")).length, 3);
});

/** Peak reserve (MiB) of the real history, and of the traced order as memory.py replays it, per capture. */
function captures(ids: string[]) {
  return python<Record<string, { real: number; traced: number }>>(
    `import tarfile
out = {}
with tarfile.open(data["tgz"]) as archive:
    for cell in data["ids"]:
        real = json.load(archive.extractfile("after/events/%s.real.json" % cell))
        held = peak = 0
        for row in real["rows"]:
            held += row[2] if row[0] == "segment_alloc" else -row[2] if row[0] == "segment_free" else 0
            peak = max(peak, held)
        t = json.load(archive.extractfile("after/events/%s.trace.json" % cell))
        ops = {int(k): tuple(v) for k, v in t["ops"].items()}
        events = memory.accumulate_in_place([tuple(e) for e in t["events"]], ops)
        traced = memory.replay(memory.step_sequence(events, t["marks"], 3, t["workspaces"], ops)).peak_reserved
        out[cell] = {"real": peak >> 20, "traced": traced >> 20}
print(json.dumps(out))`,
    { tgz: CAPTURES, ids },
  );
}

test("on real captures the replayed order reserves what the real run reserved (OLMo, Pegasus on the H100)", () => {
  // OLMo-mini b=4 (5799f120) and Pegasus-mini b=16 (2fe6599c): with every workspace before the step
  // the replay reserved 16,992 and 18,520 MiB, 4.2 and 13.6 % under the real 17,744 and 21,440 MiB.
  const peaks = captures(["5799f120", "2fe6599c"]);
  for (const [cell, { real, traced }] of Object.entries(peaks)) {
    const error = (traced - real) / real;
    assert.ok(error >= 0 && error <= 0.01, `${cell}: traced ${traced} MiB vs real ${real} MiB`);
  }
  assert.deepEqual(
    Object.values(peaks).map((p) => p.real),
    [17744, 21440],
  );
});
