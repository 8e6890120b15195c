"""The reference for `gpuprep memory --measure`: the largest batch found by hand, by plain bisection.

What a user does without gpuprep: try the top of the range; if it does not fit, bisect between
nothing-known (0) and it. Every trial is a fresh process running memory.py's trial (the same real
steps `--measure` runs: 3 training steps), and passes when it did not run out of memory and its
process's nvidia-smi use stayed under (1 - margin) of the card's nvidia-smi memory.total, the rule
`--measure` applies. The answer is then confirmed by a 20-step trial; if that fails, the next
smaller passing batch is confirmed instead.

usage: python3 bench/memory/hand-bisect.py CONFIG.json --batch 1..64 --seq-len 1024 [--amp bf16]
           [--margin 0.05] [--out FILE.json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The built payload: dist/'s memory.py has frame.py and the error table inlined (npm run build);
# src/'s has placeholders and cannot run as a script.
MEMORY_PY = [os.path.join(HERE, "..", "..", "dist", "src", "memory", "memory.py")]
# Run without gpuprep's channel, the payload frames its result as "@gpuprep-frame - memory {...}".
FRAME_PREFIX = "@gpuprep-frame - memory "


def card_total_bytes():
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", "0"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return int(out.strip().splitlines()[0]) * 2 ** 20


def trial(payload, request, batch, steps):
    started = time.time()
    run = subprocess.run([sys.executable, payload, json.dumps(dict(request, batch=batch, steps=steps))],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    lines = [l for l in run.stdout.splitlines() if l.startswith(FRAME_PREFIX)]
    result = json.loads(lines[0][len(FRAME_PREFIX):]) if lines else {"status": "error", "error": "no result"}
    return {"batch": batch, "steps": steps, "status": result.get("status"),
            "processUsedBytes": result.get("processUsedBytes"), "peakAllocatedBytes": result.get("peakAllocatedBytes"),
            "peakReservedBytes": result.get("peakReservedBytes"), "seconds": round(time.time() - started, 2)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--batch", default="1..64")
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--amp", default="bf16")
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--out")
    args = parser.parse_args()
    low, high = (int(x) for x in args.batch.split(".."))
    payload = next(p for p in MEMORY_PY if os.path.exists(p))
    request = {"mode": "trial", "device": "cuda", "source": {"kind": "config", "path": os.path.abspath(args.config)},
               "task": "train", "amp": args.amp or None, "dtype": "float32", "optimizer": "adamw",
               "gradCheckpointing": False, "lora": None, "seqLen": args.seq_len, "evalStep": True}
    limit = (1 - args.margin) * card_total_bytes()
    trials = []
    started = time.time()

    def passes(batch, steps=3):
        t = trial(payload, request, batch, steps)
        t["passed"] = t["status"] == "ok" and (t["processUsedBytes"] or 0) > 0 and t["processUsedBytes"] <= limit
        trials.append(t)
        sys.stderr.write("bisect: batch %d x %d steps %s %s %.1f s\n" % (batch, steps, t["status"], t["passed"], t["seconds"]))
        return t["passed"]

    passing = []
    if passes(high):
        answer = high
        passing.append(high)
    else:
        lo, hi = low - 1, high  # lo: largest known to pass (low - 1: none yet), hi: smallest known to fail
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if passes(mid):
                lo = mid
                passing.append(mid)
            else:
                hi = mid
        answer = lo if lo >= low else None
    confirmed = False
    while answer is not None and not confirmed:
        confirmed = passes(answer, 20)
        if not confirmed:
            smaller = [b for b in passing if b < answer]
            answer = max(smaller) if smaller else None
    result = {"answer": answer, "confirmed": confirmed, "trials": trials, "seconds": round(time.time() - started, 1),
              "limitBytes": int(limit), "margin": args.margin}
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")
    print("hand bisection: answer %s (confirmed %s), %d trials in %.1f s" % (answer, confirmed, len(trials), result["seconds"]))


if __name__ == "__main__":
    main()
