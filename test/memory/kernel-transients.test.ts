/**
 * memory.py's measured kernel memory, the parts that need no GPU, in a real Python (stdlib only):
 * a real call's allocator trace read as a template (what stays is an output, what comes and goes is
 * the kernel's own), and its insertion into a traced allocation order with the ops and marks that
 * index it. The measuring itself (KernelProbe: each distinct call run once on the GPU) runs only
 * where a CUDA GPU is; docs/benchmarks.md records it on the H100.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MEMORY_DIR = fileURLToPath(new URL("../../src/memory/", import.meta.url));

/** Debian's python3 carries torch 1.13 (CPU): the op selection is checked on its real OpOverloads. */
const DEBIAN_PYTHON = "/usr/bin/python3";

function python<T>(body: string, input: unknown, interpreter = "python3"): T {
  const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(MEMORY_DIR)}); import memory
data = json.loads(sys.argv[1])
${body}`;
  const run = spawnSync(interpreter, ["-c", script, JSON.stringify(input)], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as T;
}

test("a real call's trace: blocks still held are outputs, blocks freed inside are the kernel's own", () => {
  // Flash attention's backward as the H100 history shows it: dq, dk, dv kept, then a float32 dq
  // accumulator and the softmax sums taken and given back (sizes of RoBERTa-base b=16).
  const entries = [
    { action: "alloc", addr: 100, size: 25_165_824 },
    { action: "alloc", addr: 200, size: 25_165_824 },
    { action: "alloc", addr: 300, size: 25_165_824 },
    { action: "alloc", addr: 400, size: 138_412_032 },
    { action: "alloc", addr: 500, size: 25_559_296 },
    { action: "free_requested", addr: 400, size: 138_412_032 },
    { action: "free_completed", addr: 400, size: 138_412_032 },
    { action: "free_completed", addr: 500, size: 25_559_296 },
    { action: "free_completed", addr: 9, size: 512 }, // allocated before the call: not its own
  ];
  const template = python<unknown[]>("print(json.dumps(memory.call_template(data)))", entries);
  assert.deepEqual(template, [
    ["out"],
    ["out"],
    ["out"],
    ["a", 3, 138_412_032],
    ["a", 4, 25_559_296],
    ["f", 3],
    ["f", 4],
  ]);
});

type Insertion = { events: unknown[][]; ops: Record<string, string>; marks: Record<string, number> };

function insert(
  events: unknown[][],
  ops: Record<number, string>,
  marks: Record<string, number>,
  spans: unknown[],
) {
  return python<Insertion>(
    `events, ops, marks = memory.with_transients([tuple(e) for e in data["events"]],
    {int(k): v for k, v in data["ops"].items()}, data["marks"], [tuple(s) for s in data["spans"]], 100)
print(json.dumps({"events": events, "ops": ops, "marks": marks}))`,
    { events, ops, marks, spans },
  );
}

test("the kernel's own blocks go in between the call's traced outputs, where the real call took them", () => {
  const events = [
    ["a", 1, 512, 512], // before the call
    ["a", 2, 1024, 1000], // the call's first output
    ["a", 3, 2048, 2000], // its second
    ["f", 1],
    ["a", 4, 512, 512],
  ];
  const template = [["out"], ["a", 0, 4096], ["out"], ["f", 0]];
  const {
    events: out,
    ops,
    marks,
  } = insert(events, { 1: "conv", 4: "add" }, { params: 1, step: 4, end: 5 }, [[1, 3, template]]);
  assert.deepEqual(out, [
    ["a", 1, 512, 512],
    ["a", 2, 1024, 1000],
    ["a", 100, 4096, 4096],
    ["a", 3, 2048, 2000],
    ["f", 100],
    ["f", 1],
    ["a", 4, 512, 512],
  ]);
  // The ops follow their events; a mark set just before the call stays before its memory.
  assert.deepEqual(ops, { "1": "conv", "6": "add" });
  assert.deepEqual(marks, { params: 1, step: 6, end: 7 });
});

test("a kernel that takes memory before any output, or a call with no traced output, still gets it", () => {
  const events = [
    ["a", 1, 512, 512],
    ["a", 2, 512, 512],
  ];
  const before = [["a", 0, 8192], ["f", 0], ["out"]];
  const { events: out, marks } = insert(events, {}, { call: 1, end: 2 }, [
    [1, 2, before],
    [
      2,
      2,
      [
        ["a", 0, 1024],
        ["f", 0],
      ],
    ],
  ]);
  assert.deepEqual(out, [
    ["a", 1, 512, 512],
    ["a", 100, 8192, 8192],
    ["f", 100],
    ["a", 2, 512, 512],
    ["a", 101, 1024, 1024],
    ["f", 101],
  ]);
  assert.deepEqual(marks, { call: 1, end: 4 });
});

test("calls without own memory, unmeasured or overlapping are left as traced", () => {
  const spans = python<unknown[]>(
    `calls = [{"start": 0, "end": 2, "signature": "s1"}, {"start": 2, "end": 3, "signature": "s2"},
         {"start": 3, "end": 4, "signature": None}, {"start": 4, "end": 6, "signature": "s4"},
         {"start": 5, "end": 6, "signature": "s1"}]
templates = {"s1": [["out"], ["a", 1, 512], ["f", 1]], "s2": [["out"]], "s4": None}
print(json.dumps(memory.kernel_spans(calls, templates)))`,
    null,
  );
  // s1 at 0..2 has its own memory; s2 keeps nothing of its own; the None signature and s4 were not
  // measured; the second s1 call starts inside no other span, so it counts too.
  assert.deepEqual(spans, [
    [0, 2, [["out"], ["a", 1, 512], ["f", 1]]],
    [5, 6, [["out"], ["a", 1, 512], ["f", 1]]],
  ]);
});

test("the whole trace tier replays the inserted memory: a kernel's block raises the modelled reserve", () => {
  const MIB = 2 ** 20;
  const reserved = python<number[]>(
    `events = [("a", 1, 30 << 20, 30 << 20), ("a", 2, 30 << 20, 30 << 20)]
spans = [(1, 2, [("out",), ("a", 0, 40 << 20), ("f", 0)])]
with_kernel, _, _ = memory.with_transients(events, {}, {}, spans, 10)
print(json.dumps([memory.replay(events).peak_reserved, memory.replay(with_kernel).peak_reserved]))`,
    null,
  );
  assert.deepEqual(reserved, [60 * MIB, 100 * MIB]);
});

test("a real call that kept fewer blocks than the trace allocated (a view, an input returned) adds only its own", () => {
  // The traced call allocated one output; the real kernel returned a view of its input (kept
  // nothing) but took a 4096-byte staging block. The traced output stays, the staging block comes
  // while it is live, and nothing else is added.
  const events = [
    ["a", 1, 512, 512],
    ["a", 2, 1024, 1000], // the call's traced output
    ["a", 3, 512, 512], // after the call
  ];
  const { events: out, marks } = insert(events, {}, { call: 1, end: 3 }, [
    [
      1,
      2,
      [
        ["a", 0, 4096],
        ["f", 0],
      ],
    ],
  ]);
  assert.deepEqual(out, [
    ["a", 1, 512, 512],
    ["a", 2, 1024, 1000],
    ["a", 100, 4096, 4096],
    ["f", 100],
    ["a", 3, 512, 512],
  ]);
  assert.deepEqual(marks, { call: 1, end: 5 });
});

test("a real call that kept more blocks than the trace allocated never adds the extra one", () => {
  // The real kernel kept two blocks (its output and a cache it holds on to, such as a library
  // workspace) where the trace allocated one output and freed a temporary: the kept cache is not
  // an output of the step and is not added; the traced events all stay, in their order, with the
  // kernel's own block added while the traced output is live.
  const events = [
    ["a", 1, 1024, 1000], // the call's traced output
    ["f", 9], // a temporary the traced call freed
    ["a", 2, 512, 512],
  ];
  const template = [["out"], ["a", 0, 2048], ["out"], ["f", 0]];
  const { events: out } = insert(events, {}, {}, [[0, 2, template]]);
  assert.deepEqual(out, [
    ["a", 1, 1024, 1000],
    ["a", 100, 2048, 2048],
    ["f", 100],
    ["f", 9],
    ["a", 2, 512, 512],
  ]);
  // With the traced call's two outputs and a real kernel that kept one, both traced outputs come
  // before the kernel's own block (the real call's one kept block cannot say which it was).
  const two = [
    ["a", 1, 1024, 1000],
    ["a", 2, 1024, 1000],
  ];
  const { events: both } = insert(two, {}, {}, [[0, 2, [["out"], ["a", 0, 4096], ["f", 0]]]]);
  assert.deepEqual(both, [
    ["a", 1, 1024, 1000],
    ["a", 2, 1024, 1000],
    ["a", 100, 4096, 4096],
    ["f", 100],
  ]);
});

test("an in-place call the trace allocated nothing for: a block its real kernel kept is not added", () => {
  const events = [
    ["a", 1, 512, 512],
    ["f", 1],
  ];
  const { events: out } = insert(events, {}, {}, [[1, 1, [["out"], ["a", 0, 256], ["f", 0]]]]);
  assert.deepEqual(out, [
    ["a", 1, 512, 512],
    ["a", 100, 256, 256],
    ["f", 100],
    ["f", 1],
  ]);
});

type Selection = { ops: Record<string, boolean>; split: number[][] };

test("every op is measured but views, host reads and side effects; off-GPU calls and large inputs are not run", () => {
  // torch 1.13 (Debian's, CPU): real OpOverloads; the signatures are arg_spec's form, the CUDA
  // ones written out (no GPU here) and the host ones made by arg_spec from real CPU tensors.
  const selection = python<Selection>(
    `import torch
aten = torch.ops.aten
names = ["mm.default", "native_batch_norm_backward.default", "_softmax_backward_data.default", "add_.Tensor",
         "view.default", "transpose.int", "split.Tensor", "_local_scalar_dense.default", "empty.memory_format"]
ops = {n: memory.measurable_op(getattr(getattr(aten, n.split(".")[0]), n.split(".")[1])) for n in names}
def cuda(*shape):
    stride = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        stride[i] = stride[i + 1] * shape[i + 1]
    return ("T", tuple(shape), tuple(stride), 0, torch.float32, "cuda")
no_kwargs = memory.arg_spec(torch, ())
to_host = memory.arg_spec(torch, (("device", torch.device("cpu")),))
signatures = [
    ("gpu", ("U", (cuda(64, 64), cuda(64, 64))), no_kwargs),  # 32 KiB of inputs
    ("scalar", ("U", (cuda(64, 64), memory.arg_spec(torch, torch.zeros(())))), no_kwargs),
    ("host", memory.arg_spec(torch, (torch.zeros(4, 4), torch.zeros(4, 4))), no_kwargs),
    ("to-host", ("U", (cuda(64, 64),)), to_host),
    ("large", ("U", (cuda(1024, 1024),)), no_kwargs),  # 4 MiB of inputs
]
run, off_gpu, large = memory.split_signatures(signatures, 1 << 20)
print(json.dumps({"ops": ops, "split": [[len(run), len(off_gpu), len(large)],
      [["gpu", "scalar"].index(s[0]) for s in run]]}))`,
    null,
    DEBIAN_PYTHON,
  );
  assert.deepEqual(selection.ops, {
    "mm.default": true,
    "native_batch_norm_backward.default": true,
    "_softmax_backward_data.default": true,
    "add_.Tensor": true,
    "view.default": false,
    "transpose.int": false,
    "split.Tensor": false,
    "_local_scalar_dense.default": false,
    "empty.memory_format": false,
  });
  assert.deepEqual(selection.split, [
    [2, 2, 1],
    [0, 1],
  ]);
});
