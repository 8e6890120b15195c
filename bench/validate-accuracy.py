"""Independent timing of the shapes a `gpuprep validate --json` report measured, in the same run.

usage: python3 bench/validate-accuracy.py REPORT.json [OUT.json]

For each figure (matmul TFLOP/s, device copy GB/s, pinned H2D / D2H GB/s, SDPA and manual
attention times) it times the same operation with triton.testing.do_bench (median; it flushes L2
between runs), or torch.utils.benchmark.Timer where triton is missing, and prints validate's
number, the independent one and the difference. The target: every figure within 5%.
"""
import json
import os
import sys

import torch

# "cpu" only to try this script on a machine without a GPU against a report of validate's CPU test
# mode (the figures then mean nothing; the code paths run).
DEVICE = os.environ.get("GPUPREP_ACCURACY_DEVICE", "cuda")


def timer_ms():
    try:
        from triton.testing import do_bench

        def run(fn):
            return float(do_bench(fn, warmup=100, rep=500, return_mode="median"))

        return "triton.testing.do_bench (median)", run
    except ImportError:
        from torch.utils.benchmark import Timer

        def run(fn):
            return Timer(stmt="fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.5).median * 1e3

        return "torch.utils.benchmark.Timer (median)", run


def results_by_name(report):
    return {r["name"]: r.get("data") for r in report["payload"]["benchmarks"]["results"] if r.get("data")}


def matmul_rows(data, time_ms):
    rows = []
    for case in data.get("cases", []):
        if "tflops" not in case:
            continue
        dtype_name, n = case["dtype"], case["n"]
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        dtype = torch.float32 if dtype_name in ("tf32", "float32") else getattr(torch, dtype_name)
        a = torch.randn(n, n, device=DEVICE).to(dtype)
        b = torch.randn(n, n, device=DEVICE).to(dtype)
        ms = time_ms(lambda: torch.matmul(a, b))
        rows.append(("matmul %s %d^3 TFLOP/s" % (dtype_name, n), case["tflops"], 2.0 * n**3 / (ms * 1e-3) / 1e12))
        del a, b
        torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def membw_rows(data, time_ms):
    if "gbps" not in data:
        return []
    count = data["bytes"] // 4
    src = torch.randn(count, device=DEVICE)
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src))
    del src, dst
    torch.cuda.empty_cache()
    return [("device copy GB/s (read+write)", data["gbps"], 2 * data["bytes"] / (ms * 1e-3) / 1e9)]


def transfer_rows(data, time_ms):
    if DEVICE == "cpu":
        return []
    size = data["bytes"]
    host = torch.randint(0, 256, (size,), dtype=torch.uint8).pin_memory()
    back = torch.empty(size, dtype=torch.uint8).pin_memory()
    device = torch.empty(size, dtype=torch.uint8, device=DEVICE)
    rows = []
    if "gbps" in (data.get("h2d") or {}):
        ms = time_ms(lambda: device.copy_(host, non_blocking=True))
        rows.append(("pinned H2D GB/s", data["h2d"]["gbps"], size / (ms * 1e-3) / 1e9))
    if "gbps" in (data.get("d2h") or {}):
        ms = time_ms(lambda: back.copy_(device, non_blocking=True))
        rows.append(("pinned D2H GB/s", data["d2h"]["gbps"], size / (ms * 1e-3) / 1e9))
    return rows


def manual_attention(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / q.shape[-1] ** 0.5)
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def sdpa_rows(data, time_ms):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }
    sdpa = torch.nn.functional.scaled_dot_product_attention
    rows = []
    for case in data.get("cases", []):
        manual = case.get("manual") or {}
        if "medianMs" not in manual:
            continue
        dtype = getattr(torch, case["dtype"])
        shape = (case["batch"], case["heads"], case["seq"], case["headDim"])
        label = "%s B%d H%d S%d D%d" % ((case["dtype"],) + shape)
        q, k, v = (torch.randn(shape, device=DEVICE).to(dtype) for _ in range(3))
        manual_ms = time_ms(lambda: manual_attention(q, k, v))
        rows.append(("manual attention ms %s" % label, manual["medianMs"], manual_ms))
        for name, run in case["backends"].items():
            if not run.get("available"):
                continue
            with sdpa_kernel([backends[name]]):
                ms = time_ms(lambda: sdpa(q, k, v))
            rows.append(("SDPA %s ms %s" % (name, label), run["medianMs"], ms))
            rows.append(("SDPA %s speedup %s" % (name, label), run["speedup"], manual_ms / ms))
        del q, k, v
        torch.cuda.empty_cache()
    return rows


def main():
    report = json.load(open(sys.argv[1]))
    out_file = sys.argv[2] if len(sys.argv) > 2 else None
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: nothing to time independently")
        return
    method, time_ms = timer_ms()
    data = results_by_name(report)
    rows = []
    for name, function in (
        ("matmul", matmul_rows),
        ("membw", membw_rows),
        ("transfer", transfer_rows),
        ("sdpa", sdpa_rows),
    ):
        if data.get(name):
            try:
                rows.extend(function(data[name], time_ms))
            except Exception as exc:  # one failing figure should not hide the others
                print("%s: independent timing failed: %s" % (name, exc))
    print("independent timer: %s; torch %s; %s" % (method, torch.__version__, torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"))
    print("%-52s %12s %12s %8s" % ("figure", "validate", "independent", "diff %"))
    worst = 0.0
    records = []
    for label, ours, theirs in rows:
        diff = 100.0 * (ours - theirs) / theirs
        worst = max(worst, abs(diff))
        records.append({"figure": label, "validate": ours, "independent": theirs, "diffPct": diff})
        flag = "" if abs(diff) <= 5 else "  <-- over 5%"
        print("%-52s %12.3f %12.3f %+8.2f%s" % (label, ours, theirs, diff, flag))
    within = sum(1 for r in records if abs(r["diffPct"]) <= 5)
    print("%d of %d figures within 5%%; largest difference %.2f%%" % (within, len(records), worst))
    if out_file:
        with open(out_file, "w") as handle:
            json.dump({"method": method, "rows": records, "within5": within, "worstPct": worst}, handle, indent=1)


if __name__ == "__main__":
    main()
