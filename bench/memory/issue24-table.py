"""Issue 24's accuracy table from bench/memory/accuracy.py records: per cell the trace tier's peak
allocated against torch.cuda.max_memory_allocated(), and the estimated total on the device
(the allocator model's reserve + its safety share + the CUDA context, as src/memory/trace-tier.ts
computes it) against the process's nvidia-smi use (the device-level use: the idle H100 showed 0 MiB
used). Reads src/memory/calibration.json for the coefficients.

usage: python3 bench/memory/issue24-table.py FILE.jsonl [FILE.jsonl ...]
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CAL = json.load(open(os.path.join(HERE, "..", "..", "src", "memory", "calibration.json")))
MIB = 2 ** 20


def total_estimate(trace):
    a = trace.get("allocator") or {}
    peak = max(trace["peakAllocatedBytes"], a.get("peakAllocatedBytes") or 0)
    reserved = max(a.get("peakReservedBytes") or 0, peak)
    share = min(1.0, (a.get("convolutionBytes") or 0) / a["stepAllocatedBytes"]) if a.get("stepAllocatedBytes") else 0.0
    safety = reserved * (CAL["allocatorSafetyFraction"]["value"] + CAL["convolutionWorkspaceFraction"]["value"] * share)
    return peak, reserved + safety + CAL["cudaContexts"]["value"][0]["bytes"]


def rows(paths):
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            t, tr = r.get("truth") or {}, r.get("trace")
            label = "%s %s%s b=%s %s" % (r["model"], r.get("task"), " gc" if r.get("gradCheckpointing") else "",
                                        r["batch"], r.get("seqLen") or r.get("imageSize"))
            if t.get("status") != "ok" or not tr:
                status = t.get("status") if t.get("status") != "ok" else "ok, no trace"
                yield {"cell": label, "split": r.get("split"), "status": status, "trace": r.get("traceStatus"),
                       "why": (t.get("error") or r.get("traceError") or "")[:90]}
                continue
            peak, total = total_estimate(tr)
            used = t.get("processUsedBytes") or 0
            yield {"cell": label, "split": r.get("split"), "status": "ok",
                   "peakPct": 100.0 * (peak - t["peakAllocatedBytes"]) / t["peakAllocatedBytes"],
                   "totalPct": 100.0 * (total - used) / used if used else None,
                   "usedMiB": used // MIB, "totalMiB": int(total // MIB)}


def main():
    table = list(rows(sys.argv[1:]))
    print("| cell | split | peak allocated | total vs nvidia-smi use | use MiB | estimate MiB |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in table:
        if r["status"] != "ok":
            print("| %s | %s | %s (trace %s) | %s | | |" % (r["cell"], r["split"], r["status"], r["trace"], r["why"]))
        else:
            print("| %s | %s | %+.2f %% | %+.2f %% | %d | %d |" % (r["cell"], r["split"], r["peakPct"], r["totalPct"], r["usedMiB"], r["totalMiB"]))
    for split in ("fit", "holdout", "holdout2"):
        ok = [r for r in table if r["split"] == split and r["status"] == "ok"]
        if not ok:
            continue
        peaks = [abs(r["peakPct"]) for r in ok]
        totals = [r["totalPct"] for r in ok if r["totalPct"] is not None]
        print("\n%s: %d cells, |peak error| median %.2f %%, max %.2f %%; total vs use min %+.2f %%, median %+.2f %%, "
              "max %+.2f %%, under in %d, over +8 %% in %d" % (
                  split, len(ok), statistics.median(peaks), max(peaks), min(totals), statistics.median(totals),
                  max(totals), sum(1 for t in totals if t < 0), sum(1 for t in totals if t > 8)))


if __name__ == "__main__":
    main()
