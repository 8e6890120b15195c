"""Before/after table for the trace tier's measured kernel memory (issue 24): each cell's estimated
total against the process's nvidia-smi use, traced without (before) and with (after) kernels' own
memory measured on the GPU, against the same real run. Totals as src/memory/trace-tier.ts computes
them (issue24-table.py's total_estimate).

usage: python3 bench/memory/kernel-table.py AFTER.jsonl BEFORE.jsonl [LOOKED_AT_IDS]
  AFTER.jsonl: lanes.py records with trace and truth; BEFORE.jsonl: lanes.py --traces-only records
  made with LANES_KERNEL_TRANSIENTS=0 (joined by cell id). LOOKED_AT_IDS: comma-separated models
  whose real histories were studied while building (reported apart from the held-out cells).
"""
import importlib.util
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("issue24_table", os.path.join(HERE, "issue24-table.py"))
table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table)
MIB = 2 ** 20


def load(path):
    return {r["id"]: r for r in (json.loads(line) for line in open(path) if line.strip())}


def pct(trace, used):
    if not trace or not used:
        return None
    return 100.0 * (table.total_estimate(trace)[1] - used) / used


def kernel_note(trace):
    notes = [n for n in (trace or {}).get("notes") or [] if "kernels' own memory" in n or "could not be run" in n]
    return "; ".join(notes)[:160]


def main():
    after, before = load(sys.argv[1]), load(sys.argv[2])
    looked = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else set()
    print("| cell | split | use MiB | before: total vs use | after: total vs use | after: peak vs max_allocated | kernels measured |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    groups = {}
    for cell_id, r in after.items():
        truth = r.get("truth") or {}
        used = truth.get("processUsedBytes") if truth.get("status") == "ok" else None
        b, a = pct((before.get(cell_id) or {}).get("trace"), used), pct(r.get("trace"), used)
        label = "%s %s%s b=%s %s" % (r["model"], r.get("task"), " gc" if r.get("gradCheckpointing") else "",
                                    r["batch"], r.get("seqLen") or r.get("imageSize"))
        split = "looked at" if r["model"] in looked else r.get("split")
        peak = None
        if r.get("trace") and truth.get("peakAllocatedBytes"):
            p = table.total_estimate(r["trace"])[0]
            peak = 100.0 * (p - truth["peakAllocatedBytes"]) / truth["peakAllocatedBytes"]
        show = lambda v: "%+.2f %%" % v if v is not None else "-"
        why = "" if used else " (%s)" % (truth.get("status") or "no truth")
        print("| %s | %s | %s | %s | %s | %s | %s |" % (label, split, used // MIB if used else "-" + why, show(b), show(a),
                                                   show(peak), kernel_note(r.get("trace")) or r.get("traceError") or ""))
        if b is not None and a is not None:
            groups.setdefault(split, []).append((b, a))
    for split, pairs in groups.items():
        for name, values in (("before", [p[0] for p in pairs]), ("after", [p[1] for p in pairs])):
            print("\n%s, %s: %d cells, total vs use %+.2f ... %+.2f %% (median %+.2f %%), in 0 ... +8 %%: %d, under: %d, over +8 %%: %d"
                  % (split, name, len(values), min(values), max(values), statistics.median(values),
                     sum(1 for v in values if 0 <= v <= 8), sum(1 for v in values if v < 0), sum(1 for v in values if v > 8)))


if __name__ == "__main__":
    main()
