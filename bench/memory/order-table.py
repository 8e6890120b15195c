"""Before/after table for the replay order of the trace tier (issue 24): each cell's estimated total
against the process's nvidia-smi use, its traced step replayed with the cuBLAS workspaces before the
first step (before: memory.py step_sequence without the traced ops, the order up to commit cc203f6)
and at each thread's first matmul (after: memory.py as it is), against the same real run. The
trace ran once; both orders replay its saved events (lanes.py eventsOut), so the difference is the
order alone. The "after" figure replayed here must equal the one the trace reported on the device.

usage: python3 bench/memory/order-table.py [--earlier] RECORDS.jsonl EVENTS_DIR_OR_TGZ [LOOKED_AT_MODELS]
  --earlier: records traced by an earlier memory.py (the "after" figure is not checked against them).
  RECORDS.jsonl: lanes.py records with trace and truth; EVENTS: their events/ID.trace.json (a folder,
  or a .tgz holding */events/ID.trace.json). LOOKED_AT_MODELS: comma-separated models whose real
  histories were studied while building (reported apart from the held-out cells).
"""
import copy
import importlib.util
import json
import os
import statistics
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "memory"))
import memory  # noqa: E402

spec = importlib.util.spec_from_file_location("issue24_table", os.path.join(HERE, "issue24-table.py"))
table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table)
MIB = 2 ** 20


def traced_events(source):
    """{cell id: saved trace events} from a folder or a .tgz."""
    out = {}
    if source.endswith(".tgz"):
        with tarfile.open(source) as archive:
            for member in archive.getmembers():
                if member.name.endswith(".trace.json") and "/events/" in member.name and "before/" not in member.name:
                    out[os.path.basename(member.name).split(".")[0]] = json.load(archive.extractfile(member))
        return out
    for name in os.listdir(source):
        if name.endswith(".trace.json"):
            with open(os.path.join(source, name)) as handle:
                out[name.split(".")[0]] = json.load(handle)
    return out


def replayed(saved, ordered):
    """Peak reserved of the saved step replayed as Replayer.point does, 3 steps + eval; ordered:
    with the traced ops (workspaces at each thread's first matmul), else all before the step."""
    ops = {int(k): tuple(v) for k, v in saved["ops"].items()}
    events = memory.accumulate_in_place([tuple(e) for e in saved["events"]], ops)
    sequence = memory.step_sequence(events, saved["marks"], 3, saved["workspaces"], ops if ordered else None)
    return memory.replay(sequence).peak_reserved


def pct(trace, used):
    return 100.0 * (table.total_estimate(trace)[1] - used) / used


def main():
    args = [a for a in sys.argv[1:] if a != "--earlier"]
    check = "--earlier" not in sys.argv
    records = [json.loads(line) for line in open(args[0]) if line.strip()]
    saved = traced_events(args[1])
    looked = set(args[2].split(",")) if len(args) > 2 else set()
    print("| cell | split | use MiB | real reserved MiB | before: reserved, total vs use | after: reserved, total vs use |")
    print("| --- | --- | --- | --- | --- | --- |")
    groups = {}
    for r in records:
        truth, trace = r.get("truth") or {}, r.get("trace")
        label = "%s %s%s b=%s %s" % (r["model"], r.get("task"), " gc" if r.get("gradCheckpointing") else "",
                                    r["batch"], r.get("seqLen") or r.get("imageSize"))
        split = "looked at" if r["model"] in looked else r.get("split")
        used = truth.get("processUsedBytes") if truth.get("status") == "ok" else None
        if not trace or not used or r["id"] not in saved:
            why = (truth.get("status") or "no truth") if not used else (r.get("traceError") or "no trace events")
            print("| %s | %s | - | - | - (%s) | - |" % (label, split, str(why)[:90]))
            continue
        after = replayed(saved[r["id"]], True)
        if check and after != trace["allocator"]["peakReservedBytes"]:
            raise SystemExit("%s: replayed %d B, the trace reported %d B" % (r["id"], after, trace["allocator"]["peakReservedBytes"]))
        before_trace, after_trace = copy.deepcopy(trace), copy.deepcopy(trace)
        before_trace["allocator"]["peakReservedBytes"] = replayed(saved[r["id"]], False)
        after_trace["allocator"]["peakReservedBytes"] = after
        b, a = pct(before_trace, used), pct(after_trace, used)
        print("| %s | %s | %d | %d | %d, %+.2f %% | %d, %+.2f %% |" % (
            label, split, used // MIB, truth["peakReservedBytes"] // MIB,
            before_trace["allocator"]["peakReservedBytes"] // MIB, b, after // MIB, a))
        groups.setdefault(split, []).append((b, a))
    for split, pairs in groups.items():
        for name, values in (("before", [p[0] for p in pairs]), ("after", [p[1] for p in pairs])):
            print("\n%s, %s: %d cells, total vs use %+.2f ... %+.2f %% (median %+.2f %%), in 0 ... +8 %%: %d, under: %d, over +8 %%: %d"
                  % (split, name, len(values), min(values), max(values), statistics.median(values),
                     sum(1 for v in values if 0 <= v <= 8), sum(1 for v in values if v < 0), sum(1 for v in values if v > 8)))


if __name__ == "__main__":
    main()
