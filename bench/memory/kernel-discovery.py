"""Which aten ops take memory of their own on the GPU (issue 24): one cell's real training step
(after a first step, so the optimizer state exists) under a dispatch mode that reads, around every
op, the allocator's peak during the call against what is allocated after it; the difference is
memory the op took and gave back inside (workspaces, accumulators), which fake tensors never see.
Lists the ops with any, and whether memory.py's KERNEL_OPS measures them.

usage: python3 bench/memory/kernel-discovery.py MODEL[:SET] [MODEL ...]   (accuracy.py cells)
"""
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy  # noqa: E402


def discover(memory, torch, cell):
    from torch.utils._python_dispatch import TorchDispatchMode

    request = accuracy.cell_request(cell, False)
    found = collections.defaultdict(lambda: [0, 0, 0])  # op -> [calls with own memory, max, total]

    class OwnMemory(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            torch.cuda.reset_peak_memory_stats()
            out = func(*args, **(kwargs or {}))
            own = torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()
            if own > 0:
                entry = found[str(func)]
                entry[0] += 1
                entry[1] = max(entry[1], own)
                entry[2] += own
            return out

    model, make_inputs, optimizer, _, _ = memory.prepare(torch, request, "cuda", real=True)
    model.train()
    memory.train_step(torch, request, model, make_inputs, optimizer, cell["batch"], "cuda")
    torch.cuda.synchronize()
    with OwnMemory():
        memory.train_step(torch, request, model, make_inputs, optimizer, cell["batch"], "cuda")
    torch.cuda.synchronize()
    return found


def main():
    memory = accuracy.load_memory_module()
    import torch

    for item in sys.argv[1:]:
        model, _, which = item.partition(":")
        cell = [c for c in accuracy.cells(False, which or "holdout2") if c["model"] == model][0]
        started = time.time()
        try:
            found = discover(memory, torch, cell)
        except Exception as error:
            print(json.dumps({"cell": cell["id"], "model": model, "error": "%s: %s" % (type(error).__name__, str(error)[:200])}))
            continue
        rows = sorted(found.items(), key=lambda kv: -kv[1][2])
        print(json.dumps({"cell": cell["id"], "model": model, "batch": cell["batch"], "seconds": round(time.time() - started, 1),
                          "ops": [{"op": op, "calls": v[0], "maxBytes": v[1], "totalBytes": v[2],
                                   "measured": op.split(".")[1] in memory.KERNEL_OPS} for op, v in rows]}))
        sys.stdout.flush()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
