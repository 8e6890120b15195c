"""Issue 24's accuracy cells with every real run ALONE on the GPU, in little device time.

Two lanes run side by side:
  traces  the trace tier of each cell (fake CUDA tensors: CPU work and a CUDA context, no real
          memory to speak of), several processes at once; each also saves its traced allocation
          order (memory.py eventsOut) so the allocator model can be developed offline on it;
  truth   the real steps of each cell, ONE process at a time, each fresh: 3 training steps and an
          eval step with random weights (memory.py trial), the real allocation history saved
          (historyOut). While one runs, the next process imports torch and transformers and waits
          at a gate file, so the GPU is never shared and the imports cost no GPU time.
Cells marked solo (near the card's size) wait until no trace process holds a CUDA context.

usage:
  python3 bench/memory/lanes.py run --sets dev,holdout --out DIR [--trace-workers 12] [--budget 240]
          [--only MODELS_OR_IDS] [--traces-only]
      writes DIR/records.jsonl (one record per cell: trace, truth, accelerate, seed rule),
      DIR/summary.json, DIR/events/ID.trace.json and ID.real.json
  python3 bench/memory/lanes.py trace CELL_JSON EVENTS OUT     (one trace; the driver runs it)
LANES_KERNEL_TRANSIENTS=0: traces without measuring kernels' own memory on the GPU (memory.py
kernelTransients false: the trace tier before that measurement, for before/after tables).
LANES_KERNEL_OPS=listed: only the ops of memory.py's KERNEL_OPS measured (memory.py kernelOps; the
default measures every op of the step).
  python3 bench/memory/lanes.py truth CELL_JSON HISTORY GATE OUT  (one truth; the driver runs it)
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy  # noqa: E402

# LANES_DRY=1: accuracy.py's tiny --dry cells, traced and run on the CPU (tests the pipeline without a GPU).
DRY = os.environ.get("LANES_DRY") == "1"
DEVICE = "cpu" if DRY else "cuda"


def trace_main(cell, events_path, out_path):
    memory = accuracy.load_memory_module()
    import torch  # noqa: F401

    record = {"id": cell["id"]}
    request = dict(accuracy.cell_request(cell, DRY), eventsOut=events_path)
    if os.environ.get("LANES_KERNEL_TRANSIENTS") == "0":
        request["kernelTransients"] = False  # the trace as before kernels' own memory was measured
    if os.environ.get("LANES_KERNEL_OPS"):
        request["kernelOps"] = os.environ["LANES_KERNEL_OPS"]  # "listed": only memory.py's KERNEL_OPS measured
    try:
        accuracy.trace_into(record, memory, request, DEVICE)
        record["accelerate"] = accuracy.accelerate_estimate(accuracy.configs(DRY)[cell["model"]], cell["work"])
    except Exception as error:
        record.update({"trace": None, "traceError": "%s: %s" % (type(error).__name__, str(error)[:300])})
    with open(out_path, "w") as handle:
        json.dump(record, handle, default=str)


def truth_main(cell, history_path, gate, out_path):
    """Imports first, then waits for the gate: the GPU work starts only when the driver says so."""
    memory = accuracy.load_memory_module()
    import torch
    import transformers

    config = accuracy.configs(DRY)[cell["model"]]
    getattr(transformers, config["architectures"][0], None)  # loads the modeling code before the gate
    if cell["work"].get("lora"):
        import peft  # noqa: F401
    request = accuracy.cell_request(cell, DRY)
    ready = time.time()
    while not os.path.exists(gate):
        time.sleep(0.005)
    started = time.time()
    work = cell["work"]
    record = {"model": cell["model"], "task": work["task"], "amp": work["amp"], "dtype": work["dtype"],
              "optimizer": work["optimizer"], "gradCheckpointing": work["gradCheckpointing"], "lora": work["lora"],
              "batch": cell["batch"], "seqLen": work["seqLen"], "imageSize": work["imageSize"],
              "split": cell["split"], "id": cell["id"], "gateWaitSeconds": round(started - ready, 2)}
    try:
        truth = memory.run(dict(request, mode="trial", device=DEVICE, steps=3, allocatorHistory=True,
                                historyOut=history_path))
    except Exception as error:
        truth = {"status": "error", "error": "%s: %s" % (type(error).__name__, str(error)[:300])}
    record["trialSeconds"] = round(time.time() - started, 2)
    record["parameterCount"] = truth.get("parameterCount")
    record["trainableParameterCount"] = truth.get("trainableParameterCount")
    record["truth"] = {k: truth.get(k) for k in ("status", "peakAllocatedBytes", "peakReservedBytes", "stepMs",
                                                 "deviceUsedBytes", "deviceTotalBytes", "processUsedBytes", "error",
                                                 "reservedNowBytes", "allocatorCheck", "errorKind")}
    apps = memory.compute_apps()
    if isinstance(apps, dict):
        record["truth"]["otherProcessesBytes"] = sum(v for pid, v in apps.items() if pid != os.getpid())
    record["trialNotes"] = truth.get("notes")
    record["device"] = truth.get("device")
    record["torch"] = torch.__version__
    record["config"] = accuracy.full_config(config)
    with open(out_path, "w") as handle:
        json.dump(record, handle, default=str)


class Lane(object):
    """One subprocess per cell, its result read from a file when it exits."""

    def __init__(self, work_dir, kind):
        self.dir, self.kind = work_dir, kind

    def paths(self, cell):
        base = os.path.join(self.dir, cell["id"])
        return base + "." + self.kind + ".out.json", base + "." + self.kind + ".log"

    def spawn(self, cell, *extra):
        out, log = self.paths(cell)
        command = [sys.executable, os.path.abspath(__file__), self.kind, json.dumps(cell)] + list(extra) + [out]
        return subprocess.Popen(command, stdout=open(log, "w"), stderr=subprocess.STDOUT)

    def result(self, cell, proc):
        out, _ = self.paths(cell)
        if os.path.exists(out):
            with open(out) as handle:
                return json.load(handle)
        return {"id": cell["id"], "exit": proc.returncode}


def run_lanes(args):
    todo = []
    for which in args.sets.split(","):
        todo += accuracy.cells(DRY, which)
    if args.only:
        wanted = args.only.split(",")
        todo = [c for c in todo if c["model"] in wanted or c["id"] in wanted]
    events = os.path.join(args.out, "events")
    work = os.path.join(args.out, "work")
    for folder in (events, work):
        os.makedirs(folder, exist_ok=True)
    traces, truths = Lane(work, "trace"), Lane(work, "truth")
    trace_queue = list(todo)
    truth_queue = [] if args.traces_only else [c for c in todo if not c["solo"]] + [c for c in todo if c["solo"]]
    started = time.time()
    deadline = started + args.budget
    running_traces, records = [], {}
    current = warm = None  # (cell, proc, started) of the truth running, and the next one waiting at its gate

    def gate(cell):
        return os.path.join(work, cell["id"] + ".gate")

    def spawn_truth(cell):
        return (cell, truths.spawn(cell, os.path.join(events, cell["id"] + ".real.json"), gate(cell)), None)

    def merge(cell, fields):
        record = records.setdefault(cell["id"], {"id": cell["id"], "model": cell["model"], "split": cell["split"],
                                                 "batch": cell["batch"]})
        record.update({k: v for k, v in fields.items() if k != "id"})
        # Written as each result comes, so a run stopped at its time limit still leaves its records.
        with open(os.path.join(args.out, "records.partial.jsonl"), "w") as handle:
            for done in records.values():
                handle.write(json.dumps(done, default=str) + "\n")

    while trace_queue or running_traces or truth_queue or current or warm:
        now = time.time()
        while trace_queue and len(running_traces) < args.trace_workers and now < deadline:
            cell = trace_queue.pop(0)
            running_traces.append((cell, traces.spawn(cell, os.path.join(events, cell["id"] + ".trace.json")), now))
        if now >= deadline:
            trace_queue = []
        for item in list(running_traces):
            cell, proc, begun = item
            if proc.poll() is None and now - begun < args.trace_timeout:
                continue
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            running_traces.remove(item)
            merge(cell, traces.result(cell, proc))
            sys.stderr.write("trace %s b=%s %.0fs\n" % (cell["model"], cell["batch"], now - begun))
        if current is not None:
            cell, proc, begun = current
            if proc.poll() is not None or now - begun > args.truth_timeout:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                result = truths.result(cell, proc)
                result["wallSeconds"] = round(now - begun, 1)
                result["ranAlone"] = True
                merge(cell, result)
                sys.stderr.write("truth %s b=%s %s %.1fs\n" % (cell["model"], cell["batch"],
                                                               (result.get("truth") or {}).get("status"), now - begun))
                current = None
        if current is None and (warm is not None or truth_queue) and now < deadline:
            if warm is None:
                warm = spawn_truth(truth_queue.pop(0))
            if not (warm[0]["solo"] and running_traces):
                open(gate(warm[0]), "w").close()
                current = (warm[0], warm[1], time.time())
                warm = spawn_truth(truth_queue.pop(0)) if truth_queue else None
        elif now >= deadline and current is None:
            if warm is not None:
                warm[1].kill()
                warm[1].wait()
                warm = None
            truth_queue = []
        time.sleep(0.05)
    out = [records[c["id"]] for c in todo if c["id"] in records]
    accuracy.add_seed_rule([r for r in out if r.get("truth")])
    with open(os.path.join(args.out, "records.jsonl"), "w") as handle:
        for record in out:
            handle.write(json.dumps(record, default=str) + "\n")
    summary = accuracy.summarize([r for r in out if r.get("truth")])
    summary["wallSeconds"] = round(time.time() - started, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    print("lanes: %d cells, %d with truth, %d traced, %.0f s" % (
        len(out), sum(1 for r in out if r.get("truth")), sum(1 for r in out if r.get("trace")), time.time() - started))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "trace":
        return trace_main(json.loads(sys.argv[2]), sys.argv[3], sys.argv[4])
    if len(sys.argv) > 1 and sys.argv[1] == "truth":
        return truth_main(json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--sets", default="dev,holdout")
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", help="models or cell ids, comma-separated")
    parser.add_argument("--traces-only", action="store_true", help="no real runs: the traces and their events")
    parser.add_argument("--trace-workers", type=int, default=12)
    parser.add_argument("--trace-timeout", type=float, default=150)
    parser.add_argument("--truth-timeout", type=float, default=120)
    parser.add_argument("--budget", type=float, default=240, help="seconds after which no new cell starts")
    run_lanes(parser.parse_args())


if __name__ == "__main__":
    main()
