"""Independent timing of the shapes a `gpuprep validate --json` report measured, in the same run.

usage: python3 bench/validate-accuracy.py REPORT.json [OUT.json]

For each figure (matmul TFLOP/s, device copy GB/s, pinned H2D / D2H GB/s, SDPA and manual
attention times) it times the same operation with triton.testing.do_bench (median; it flushes L2
between runs), or torch.utils.benchmark.Timer where triton is missing, and prints validate's
number, the independent one and the difference. The target: every figure within 5%.

GPU clocks and power drift over minutes (the first H100 run of this script, which timed
independently several minutes after validate, differed by up to 11% on figures that agree when
measured together). So each figure is measured ROUNDS times, alternating validate's own benchmark
code (imported from the built dist/src/validate/validate.py: the same functions, shapes, buffer rotation and
timer the report used) with the independent timer on the same shapes, and the medians of the rounds
are compared. The report's own figure from the full run is printed beside them.
"""
import importlib.util
import json
import os
import sys

import torch

ROUNDS = int(os.environ.get("GPUPREP_ACCURACY_ROUNDS", "3"))
HERE = os.path.dirname(os.path.abspath(__file__))


def load_validate_payload():
    """validate's payload as a module: its Bench and benchmark functions."""
    # The built copy: torch_env.py is inlined there (npm run build).
    path = os.path.join(HERE, "..", "dist", "src", "validate", "validate.py")
    spec = importlib.util.spec_from_file_location("gpuprep_validate_payload", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def alternate(ours, theirs):
    """Median of ROUNDS alternating measurements of each: (validate's, independent)."""
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(ours())
        b.append(theirs())
    return median(a), median(b)

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


# Each group returns three functions of no arguments, each giving {figure label: value}: the figure
# as the full validate run reported it, one measurement by validate's own code, one independent one.


def matmul_groups(data, time_ms, V, b):
    for case in data.get("cases", []):
        if "tflops" not in case:
            continue
        dtype_name, n = case["dtype"], case["n"]
        label = "matmul %s %d^3 TFLOP/s" % (dtype_name, n)

        def ours(dtype_name=dtype_name, n=n, label=label):
            return {label: V.matmul_case(b, dtype_name, n)["tflops"]}

        def theirs(dtype_name=dtype_name, n=n, label=label):
            torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
            dtype = torch.float32 if dtype_name in ("tf32", "float32") else getattr(torch, dtype_name)
            a = torch.randn(n, n, device=DEVICE).to(dtype)
            c = torch.randn(n, n, device=DEVICE).to(dtype)
            ms = time_ms(lambda: torch.matmul(a, c))
            torch.backends.cuda.matmul.allow_tf32 = False
            del a, c
            torch.cuda.empty_cache() if DEVICE == "cuda" else None
            return {label: 2.0 * n**3 / (ms * 1e-3) / 1e12}

        yield (lambda label=label, case=case: {label: case["tflops"]}), ours, theirs


def membw_groups(data, time_ms, V, b):
    if "gbps" not in data:
        return
    label = "device copy GB/s (read+write)"

    def theirs():
        count = data["bytes"] // 4
        src = torch.randn(count, device=DEVICE)
        dst = torch.empty_like(src)
        ms = time_ms(lambda: dst.copy_(src))
        del src, dst
        return {label: 2 * data["bytes"] / (ms * 1e-3) / 1e9}

    yield (lambda: {label: data["gbps"]}), (lambda: {label: V.bench_membw(b)["gbps"]}), theirs


def transfer_groups(data, time_ms, V, b):
    if DEVICE == "cpu":
        return
    labels = {"h2d": "pinned H2D GB/s", "d2h": "pinned D2H GB/s"}
    present = [d for d in labels if "gbps" in (data.get(d) or {})]

    def ours():
        result = V.bench_transfer(b)
        return {labels[d]: result[d]["gbps"] for d in present if "gbps" in result.get(d, {})}

    def theirs():
        size = data["bytes"]
        host = torch.randint(0, 256, (size,), dtype=torch.uint8).pin_memory()
        back = torch.empty(size, dtype=torch.uint8).pin_memory()
        device = torch.empty(size, dtype=torch.uint8, device=DEVICE)
        out = {}
        if "h2d" in present:
            out[labels["h2d"]] = size / (time_ms(lambda: device.copy_(host, non_blocking=True)) * 1e-3) / 1e9
        if "d2h" in present:
            out[labels["d2h"]] = size / (time_ms(lambda: back.copy_(device, non_blocking=True)) * 1e-3) / 1e9
        return out

    yield (lambda: {labels[d]: data[d]["gbps"] for d in present}), ours, theirs


def manual_attention(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / q.shape[-1] ** 0.5)
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def sdpa_figures(case, prefix=""):
    """The report's SDPA figures of one case, as {label: value}."""
    label = "%s B%d H%d S%d D%d" % (case["dtype"], case["batch"], case["heads"], case["seq"], case["headDim"])
    out = {}
    if "medianMs" in (case.get("manual") or {}):
        out["manual attention ms %s" % label] = case["manual"]["medianMs"]
    for name, run in (case.get("backends") or {}).items():
        if run.get("available") and "medianMs" in run:
            out["SDPA %s ms %s" % (name, label)] = run["medianMs"]
            if "speedup" in run:
                out["SDPA %s speedup %s" % (name, label)] = run["speedup"]
    return out


def sdpa_groups(data, time_ms, V, b):
    import warnings

    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }
    sdpa = torch.nn.functional.scaled_dot_product_attention
    api = V.sdpa_api(torch)
    for case in data.get("cases", []):
        if "medianMs" not in (case.get("manual") or {}):
            continue
        shape = (case["batch"], case["heads"], case["seq"], case["headDim"])

        def ours(case=case, shape=shape):
            return sdpa_figures(V.sdpa_case(b, api, case["dtype"], shape, warnings))

        def theirs(case=case, shape=shape):
            label = "%s B%d H%d S%d D%d" % ((case["dtype"],) + shape)
            dtype = getattr(torch, case["dtype"])
            q, k, v = (torch.randn(shape, device=DEVICE).to(dtype) for _ in range(3))
            manual_ms = time_ms(lambda: manual_attention(q, k, v))
            out = {"manual attention ms %s" % label: manual_ms}
            for name, run in case["backends"].items():
                if not run.get("available"):
                    continue
                with sdpa_kernel([backends[name]]):
                    ms = time_ms(lambda: sdpa(q, k, v))
                out["SDPA %s ms %s" % (name, label)] = ms
                out["SDPA %s speedup %s" % (name, label)] = manual_ms / ms
            del q, k, v
            return out

        yield (lambda case=case: sdpa_figures(case)), ours, theirs


def measure_group(reported, ours, theirs):
    """[(label, reported, validate median, independent median)] over ROUNDS alternating rounds."""
    mine, other = {}, {}
    for _ in range(ROUNDS):
        for key, value in ours().items():
            mine.setdefault(key, []).append(value)
        for key, value in theirs().items():
            other.setdefault(key, []).append(value)
    report = reported()
    return [(key, report.get(key), median(mine[key]), median(other[key])) for key in mine if key in other]


def main():
    report = json.load(open(sys.argv[1]))
    out_file = sys.argv[2] if len(sys.argv) > 2 else None
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: nothing to time independently")
        return
    method, time_ms = timer_ms()
    V = load_validate_payload()
    b = V.Bench(torch, {"device": "cpu"} if DEVICE == "cpu" else {})
    data = results_by_name(report)
    rows = []
    for name, groups in (
        ("matmul", matmul_groups),
        ("membw", membw_groups),
        ("transfer", transfer_groups),
        ("sdpa", sdpa_groups),
    ):
        if data.get(name):
            try:
                for reported, ours, theirs in groups(data[name], time_ms, V, b):
                    rows.extend(measure_group(reported, ours, theirs))
            except Exception as exc:  # one failing figure should not hide the others
                print("%s: independent timing failed: %s" % (name, exc))
    device_name = torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"
    print("independent timer: %s; validate's own code alternated with it, median of %d rounds each" % (method, ROUNDS))
    print("torch %s; %s" % (torch.__version__, device_name))
    print("%-50s %10s %10s %11s %8s" % ("figure", "report", "validate", "independent", "diff %"))
    worst = 0.0
    records = []
    for label, reported, ours, theirs in rows:
        diff = 100.0 * (ours - theirs) / theirs
        worst = max(worst, abs(diff))
        records.append({"figure": label, "report": reported, "validate": ours, "independent": theirs, "diffPct": diff})
        flag = "" if abs(diff) <= 5 else "  <-- over 5%"
        shown = "%10.3f" % reported if reported is not None else "%10s" % "-"
        print("%-50s %s %10.3f %11.3f %+8.2f%s" % (label, shown, ours, theirs, diff, flag))
    within = sum(1 for r in records if abs(r["diffPct"]) <= 5)
    print("%d of %d figures within 5%%; largest difference %.2f%%" % (within, len(records), worst))
    if out_file:
        with open(out_file, "w") as handle:
            json.dump(
                {"method": method, "rounds": ROUNDS, "rows": records, "within5": within, "worstPct": worst},
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()
