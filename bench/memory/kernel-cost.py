"""What measuring every op's own memory costs (issue 24): per cell, the distinct calls the trace ran
for real on the GPU and the seconds that took, with only memory.py's KERNEL_OPS (before) and with
every op (after); the whole trace's seconds beside them (both lanes ran side by side on one machine,
so trace seconds include the other lane's load).

usage: python3 bench/memory/kernel-cost.py AFTER.jsonl BEFORE.jsonl
"""
import json
import re
import sys

NOTE = re.compile(r"(\d+) distinct calls run once each in ([\d.]+) s \(of (\d+) distinct signatures\), (\d+) with memory")
OLD_NOTE = re.compile(r"(\d+) distinct calls run once each in ([\d.]+) s")


def load(path):
    return {r["id"]: r for r in (json.loads(line) for line in open(path) if line.strip())}


def probe_cost(record):
    """(calls run, their seconds, distinct signatures, calls with own memory) from the trace's notes."""
    for note in ((record or {}).get("trace") or {}).get("notes") or []:
        found = NOTE.search(note)
        if found:
            return int(found.group(1)), float(found.group(2)), int(found.group(3)), int(found.group(4))
        found = OLD_NOTE.search(note)
        if found:
            return int(found.group(1)), float(found.group(2)), None, None
    return None


def main():
    after, before = load(sys.argv[1]), load(sys.argv[2])
    print("| cell | before: calls run, s | after: signatures, calls run, with own memory, s | trace s before / after |")
    print("| --- | --- | --- | --- |")
    for cell_id, r in after.items():
        b_rec = before.get(cell_id) or {}
        b, a = probe_cost(b_rec), probe_cost(r)
        show_b = "%d, %.1f" % (b[0], b[1]) if b else "-"
        show_a = "%s, %d, %s, %.1f" % (a[2], a[0], a[3], a[1]) if a else "- (%s)" % (r.get("traceError") or "no note")[:80]
        print("| %s b=%s | %s | %s | %s / %s |" % (r["model"], r.get("batch"), show_b, show_a,
                                                  b_rec.get("traceSeconds", "-"), r.get("traceSeconds", "-")))


if __name__ == "__main__":
    main()
