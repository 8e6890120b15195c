"""gpuprep validate payload: environment checks and GPU benchmarks, run by the target interpreter.

Usage: python validate.py '<options JSON>'   -> prints one JSON document on stdout (run by gpuprep:
as the payload frame of frame.py, "@gpuprep-frame NONCE validate {...}").

The top level uses the standard library only (any Python >= 3.8). Everything that imports torch
runs in a child process with a time limit: the torch environment and the extension imports in
torch_env.py (shared with doctor's probe, inlined below by the build), the model and benchmarks
in this same file, so a crash or a hang becomes a
recorded result instead of a failure of the tool. The benchmark child prints one JSON line per
finished benchmark, so the ones done before a crash survive it.

Options (all optional): quick (bool), only (list of names), model (path), device ("cuda", or
"cpu" which runs every benchmark on the CPU at toy sizes: a test mode for machines without a GPU),
timeouts ({env, bench, extension, model} in seconds), extensions (the module names to import-check:
gpuprep passes the knowledge base's import-checks table; none without it).

Timing follows the usual rules: CUDA events around each run, warm-up first, median of many runs,
random inputs (never zeros), and buffers rotated so the inputs of one run are not in L2.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

SCHEMA = "gpuprep.validate.payload"
SCHEMA_VERSION = 1

BENCHMARKS = ["sdpa", "matmul", "membw", "transfer", "nccl"]
CHECK_GROUPS = ["extensions", "model"]

DEFAULT_TIMEOUTS = {"env": 180, "bench": 600, "extension": 120, "model": 600}

# The torch-environment child (src/probe/torch_env.py, shared with doctor's probe). This payload
# travels as one file, so the build puts the file's text here; run from src/ it is missing.
TORCH_ENV_SOURCE = None  # @inline ../probe/torch_env.py
if TORCH_ENV_SOURCE is None:
    sys.stderr.write("gpuprep validate: torch_env.py is not inlined; run the built copy under dist/\n")
    sys.exit(2)
# Its top level only defines names: this file uses its RESULT_MARK and sdpa_api from the same text.
TORCH_ENV = {"__name__": "gpuprep_torch_env"}
exec(compile(TORCH_ENV_SOURCE, "torch_env.py", "exec"), TORCH_ENV)
RESULT_MARK = TORCH_ENV["RESULT_MARK"]
sdpa_api = TORCH_ENV["sdpa_api"]
# The payload frame (src/probe/frame.py, shared with the probe and memory.py): the document is
# written as "@gpuprep-frame NONCE validate {...}" when gpuprep named a nonce.
FRAME_SOURCE = None  # @inline ../probe/frame.py
FRAME = {"__name__": "gpuprep_frame"}
exec(compile(FRAME_SOURCE or "", "frame.py", "exec"), FRAME)


def tail(text, limit=2000):
    text = text or ""
    return text[-limit:] if len(text) > limit else text


def error_text(exc):
    message = str(exc).strip().splitlines()
    first = message[0] if message else ""
    return "%s: %s" % (type(exc).__name__, first) if first else type(exc).__name__


# --------------------------------------------------------------------------- parent side


def kill_group(pgid):
    try:
        os.killpg(pgid, 9)
    except OSError:
        pass


def run_command(command, timeout, grace=2.0):
    """(exit code, stdout, stderr) of a short command, or None on timeout. Settles when it exits:
    a daemon left holding its pipes is killed with its process group, not waited for."""
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    out, err = [], []

    def reader(stream, into):
        # Chunk by chunk: what arrived counts even when a daemon never closes the pipe.
        kept = 0
        while True:
            try:
                chunk = os.read(stream.fileno(), 65536)
            except OSError:
                return
            if not chunk:
                return
            if kept < 4 * 1024 * 1024:
                into.append(chunk)
                kept += len(chunk)

    threads = [threading.Thread(target=reader, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, err), daemon=True)]
    for thread in threads:
        thread.start()
    try:
        proc.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        proc.wait()
        timed_out = True
    for thread in threads:
        thread.join(timeout=grace)
    kill_group(proc.pid)
    if timed_out:
        return None
    decode = lambda chunks: b"".join(chunks).decode("utf-8", "replace")
    return proc.returncode, decode(out), decode(err)


def run_child(section, options, timeout, on_line=None):
    """Run one section of this file in a child interpreter; return a ChildRun-like dict."""
    command = [sys.executable, os.path.abspath(__file__), "--child", section, json.dumps(options)]
    return run_child_command(command, timeout, on_line)


def run_torch_env(options, timeout):
    """torch_env.py in a child: {} for the torch environment, {"import": ...} for one module. Its
    {"error"} (torch or the module does not import) is the run's error."""
    run = run_child_command([sys.executable, "-c", TORCH_ENV_SOURCE, json.dumps(options)], timeout)
    result = None
    for line in run.pop("lines"):
        if line.startswith(RESULT_MARK):
            try:
                result = json.loads(line[len(RESULT_MARK):])
            except ValueError:
                result = None
    if result is not None and result.get("error"):
        run.update(status="error", error=result["error"])
    elif run["status"] == "ok" and result is None:
        run.update(status="error", error="the child printed no JSON")
    return {"run": run, "result": result if run["status"] == "ok" else None}


def env_view(shared):
    """validate's env result from torch_env.py's facts: the same values in the shape this payload
    has had since schemaVersion 1 (torch.{version,file,cuda}, sdpaEnabled, tf32 with the matmul
    precision, kernel null when no GPU was there to run it)."""
    env = dict(shared)
    env["torch"] = {"version": env.pop("version"), "file": env.pop("file"), "cuda": env.pop("cudaBuilt")}
    env["sdpaEnabled"] = env.pop("sdpa")
    env["tf32"] = dict(env["tf32"], float32MatmulPrecision=env.pop("float32MatmulPrecision"))
    if not env["kernel"]["ran"]:
        env["kernel"] = None
    return env


def run_child_command(command, timeout, on_line=None):
    started = time.time()
    # Its own process group, so a timeout also ends what it started (the NCCL ranks).
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    lines = []
    stderr_chunks = []

    def read_stdout():
        for line in proc.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line)

    def read_stderr():
        stderr_chunks.append(proc.stderr.read())

    readers = [threading.Thread(target=read_stdout), threading.Thread(target=read_stderr)]
    for reader in readers:
        reader.daemon = True
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            proc.kill()
        proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    # Whatever the section left running in its group (a daemon holding the pipes) goes too.
    kill_group(proc.pid)
    duration_ms = round((time.time() - started) * 1000)
    stderr = "".join(stderr_chunks)
    run = {
        "status": "ok",
        "durationMs": duration_ms,
        "exitCode": proc.returncode if proc.returncode is not None and proc.returncode >= 0 else None,
        "signal": None,
        "error": None,
        "stderrTail": tail(stderr) or None,
        "lines": lines,
    }
    if timed_out:
        run["status"] = "timeout"
        run["error"] = "no answer within %gs" % timeout
    elif proc.returncode is not None and proc.returncode < 0:
        run["status"] = "crash"
        run["signal"] = "signal %d" % -proc.returncode
        run["error"] = "killed by signal %d" % -proc.returncode
    elif proc.returncode != 0:
        run["status"] = "error"
        last = [line for line in stderr.strip().splitlines() if line.strip()]
        run["error"] = last[-1] if last else "exit code %s" % proc.returncode
    return run


def last_json(lines):
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def section_result(run):
    """The child's JSON result and its run record, without the raw stdout lines."""
    result = last_json(run.pop("lines")) if run["status"] == "ok" else None
    if run["status"] == "ok" and result is None:
        run["status"] = "error"
        run["error"] = "the child printed no JSON"
    return {"run": run, "result": result}


def find_spec_safely(name):
    """Is a top-level module installed? find_spec of a top-level name does not import it."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def check_extensions(options, timeout):
    names = options.get("extensions") or []
    torch_first = find_spec_safely("torch")
    results = [None] * len(names)

    def one(index, name):
        if not find_spec_safely(name):
            results[index] = {"module": name, "installed": False, "run": None, "result": None}
            return
        record = run_torch_env({"import": name, "torchFirst": torch_first}, timeout)
        record.update({"module": name, "installed": True})
        results[index] = record

    threads = [threading.Thread(target=one, args=(i, n)) for i, n in enumerate(names)]
    # A few at a time: each child imports torch, which is CPU- and disk-heavy.
    for start in range(0, len(threads), 4):
        batch = threads[start : start + 4]
        for thread in batch:
            thread.start()
        for thread in batch:
            thread.join()
    return results


def query_nvidia_smi():
    fields = [
        "index",
        "name",
        "pci.bus_id",
        "pcie.link.gen.current",
        "pcie.link.gen.max",
        "pcie.link.width.current",
        "pcie.link.width.max",
        "clocks.sm",
        "clocks.max.sm",
    ]
    command = ["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
    try:
        ran = run_command(command, 30)
    except FileNotFoundError:
        return {"status": "not-found", "error": "nvidia-smi is not on PATH", "gpus": []}
    if ran is None:
        return {"status": "failed", "error": "nvidia-smi gave no answer within 30 s", "gpus": []}
    code, stdout, stderr = ran
    if code != 0:
        lines = (stdout + stderr).strip().splitlines()
        return {"status": "failed", "error": lines[0] if lines else "exit %d" % code, "gpus": []}
    gpus = []
    for line in stdout.strip().splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            continue
        row = {}
        for field, cell in zip(fields, cells):
            key = field.replace(".", "_")
            if field in ("name", "pci.bus_id"):
                row[key] = cell
            else:
                try:
                    row[key] = int(float(cell))
                except ValueError:
                    row[key] = None
        gpus.append(row)
    return {"status": "ok", "error": None, "gpus": gpus}


def selected(options, name):
    only = options.get("only")
    if not only:
        return True
    if name in only:
        return True
    if name in BENCHMARKS and "benchmarks" in only:
        return True
    if name in CHECK_GROUPS and "checks" in only:
        return True
    return False


def parent_main(options):
    timeouts = dict(DEFAULT_TIMEOUTS)
    timeouts.update(options.get("timeouts") or {})
    started = time.time()
    document = {
        "schema": SCHEMA,
        "schemaVersion": SCHEMA_VERSION,
        "python": {"executable": sys.executable, "version": ".".join(map(str, sys.version_info[:3]))},
        "options": options,
        "nvidiaSmi": query_nvidia_smi(),
    }
    document["env"] = run_torch_env({"matmul": True}, timeouts["env"])
    if document["env"]["result"] is not None:
        document["env"]["result"] = env_view(document["env"]["result"])

    if selected(options, "extensions"):
        document["extensions"] = check_extensions(options, timeouts["extension"])
    else:
        document["extensions"] = None

    if options.get("model") and selected(options, "model"):
        document["model"] = section_result(run_child("model", {"path": options["model"]}, timeouts["model"]))
    else:
        document["model"] = None

    wanted = [name for name in BENCHMARKS if selected(options, name)]
    document["benchmarks"] = run_benchmarks(options, wanted, timeouts["bench"])
    document["durationMs"] = round((time.time() - started) * 1000)
    return document


def run_benchmarks(options, wanted, timeout):
    """The benchmark child streams start/result lines; a crash leaves the finished ones."""
    if not wanted:
        return {"run": None, "results": [], "running": None, "wanted": []}
    events = []

    def on_line(line):
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass

    child_options = dict(options)
    child_options["wanted"] = wanted
    run = run_child("bench", child_options, timeout, on_line)
    run.pop("lines")
    results = [event["result"] for event in events if event.get("event") == "result"]
    finished = set(result.get("name") for result in results)
    running = None
    for event in events:
        if event.get("event") == "start" and event.get("name") not in finished:
            running = event.get("name")
    return {"run": run, "results": results, "running": running, "wanted": wanted}


# --------------------------------------------------------------------------- child: model


SAFETENSORS_DTYPES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
}


def load_safetensors(torch, path):
    """Reads a .safetensors file with torch alone (the format is an 8-byte header length, a JSON
    header, then raw little-endian tensor bytes), through mmap so nothing is copied twice."""
    import mmap
    import struct

    tensors = {}
    with open(path, "rb") as handle:
        (header_len,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_len).decode("utf-8"))
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    base = 8 + header_len
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = getattr(torch, SAFETENSORS_DTYPES[info["dtype"]])
        start, end = info["data_offsets"]
        count = 1
        for dim in info["shape"]:
            count *= dim
        if count == 0:
            tensors[name] = torch.empty(info["shape"], dtype=dtype)
            continue
        flat = torch.frombuffer(mapped, dtype=dtype, count=count, offset=base + start)
        tensors[name] = flat.reshape(info["shape"])
    return tensors


def torch_load(torch, path):
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except TypeError:  # torch < 2.1 has no mmap=
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except TypeError:  # torch < 1.13 has no weights_only=
            return torch.load(path, map_location="cpu")


def weight_files(path):
    if os.path.isfile(path):
        return [path]
    names = sorted(os.listdir(path))
    for suffix in (".safetensors", ".bin", ".pt", ".pth"):
        found = [os.path.join(path, n) for n in names if n.endswith(suffix) and not n.startswith(".")]
        if found:
            return found
    return []


def child_model(options):
    import warnings

    warnings.simplefilter("ignore")
    import torch

    path = options["path"]
    out = {"path": path, "kind": "dir" if os.path.isdir(path) else "file", "config": None}
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json")):
        with open(os.path.join(path, "config.json")) as handle:
            config = json.load(handle)
        out["config"] = {
            "modelType": config.get("model_type"),
            "architectures": config.get("architectures"),
        }
    files = weight_files(path)
    if not files:
        raise RuntimeError("no weight files (*.safetensors, *.bin, *.pt, *.pth) in %s" % path)
    started = time.time()
    params = 0
    count = 0
    dtypes = {}
    nonfinite = []
    for file in files:
        try:
            state = load_safetensors(torch, file) if file.endswith(".safetensors") else torch_load(torch, file)
        except Exception as exc:
            raise RuntimeError("cannot load %s: %s" % (os.path.basename(file), error_text(exc)))
        if not file.endswith(".safetensors"):
            if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
                state = state["state_dict"]
            if hasattr(state, "state_dict") and not isinstance(state, dict):
                state = state.state_dict()
        if not isinstance(state, dict):
            raise RuntimeError("%s holds a %s, not a state dict" % (file, type(state).__name__))
        for name, value in state.items():
            if not torch.is_tensor(value):
                continue
            count += 1
            params += value.numel()
            key = str(value.dtype).replace("torch.", "")
            dtypes[key] = dtypes.get(key, 0) + value.numel()
            if value.is_floating_point() and value.numel() and not bool(torch.isfinite(value).all()):
                nonfinite.append(name)
    out.update(
        {
            "files": [os.path.basename(f) for f in files],
            "tensors": count,
            "parameters": params,
            "dtypes": dtypes,
            "nonFinite": nonfinite[:20],
            "loadSeconds": round(time.time() - started, 3),
        }
    )
    print(json.dumps(out))


# --------------------------------------------------------------------------- child: benchmarks


class Bench:
    """What every benchmark needs: the device, sizes for the mode, a timer, random data."""

    def __init__(self, torch, options):
        self.torch = torch
        self.quick = bool(options.get("quick"))
        self.cpu_mode = options.get("device") == "cpu"
        self.device = torch.device("cpu" if self.cpu_mode else "cuda")
        self.generator = None
        if self.cpu_mode:
            self.l2_bytes = 32 << 20
            self.free_bytes = 2 << 30
        else:
            props = torch.cuda.get_device_properties(0)
            # Older torch has no L2_cache_size: assume a large L2 so buffers are rotated anyway.
            self.l2_bytes = getattr(props, "L2_cache_size", 0) or (128 << 20)
            self.free_bytes = torch.cuda.mem_get_info()[0]

    def sync(self):
        if not self.cpu_mode:
            self.torch.cuda.synchronize()

    def randn(self, shape, dtype):
        return self.torch.randn(shape, device=self.device, dtype=self.torch.float32).to(dtype)

    def time_ms(self, run, budget_ms=400.0, min_reps=10, max_reps=200, warmup_ms=100.0):
        """Median of many timed runs. run(i) does one iteration on buffer set i. The first call
        is a cold start (module load, handle creation) and is never counted."""
        torch = self.torch
        run(0)
        self.sync()
        started = time.perf_counter()
        run(1)
        self.sync()
        estimate_ms = max((time.perf_counter() - started) * 1000, 1e-3)
        warmup = int(min(max(warmup_ms / estimate_ms, 3), 200))
        for i in range(warmup):
            run(i)
        self.sync()
        # Short operations are timed in groups, so the event pair's own cost and any launch gap
        # are spread over at least ~1 ms of work.
        inner = int(min(max(1.0 / estimate_ms, 1), 100))
        reps = int(min(max(budget_ms / (estimate_ms * inner), min_reps), max_reps))
        times = []
        if self.cpu_mode:
            for rep in range(reps):
                started = time.perf_counter()
                for j in range(inner):
                    run(rep * inner + j)
                times.append((time.perf_counter() - started) * 1000 / inner)
        else:
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for rep in range(reps):
                starts[rep].record()
                for j in range(inner):
                    run(rep * inner + j)
                ends[rep].record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) / inner for s, e in zip(starts, ends)]
        times.sort()
        median = times[len(times) // 2] if len(times) % 2 else (times[len(times) // 2 - 1] + times[len(times) // 2]) / 2
        q1 = times[len(times) // 4]
        q3 = times[(3 * len(times)) // 4]
        return {
            "medianMs": median,
            "minMs": times[0],
            "maxMs": times[-1],
            "reps": reps,
            "perSample": inner,
            "warmup": warmup,
            "iqrPct": round(100 * (q3 - q1) / median, 2) if median > 0 else None,
        }

    def rotation(self, bytes_per_set, max_sets=64):
        """How many input sets to cycle through so one run's inputs were evicted from L2 by the
        others: together at least 3x L2, and no more than a quarter of free memory."""
        if bytes_per_set >= 3 * self.l2_bytes:
            return 1
        wanted = -(-3 * self.l2_bytes // bytes_per_set)
        affordable = max(1, int(self.free_bytes * 0.25 // bytes_per_set))
        return int(max(1, min(wanted, affordable, max_sets)))


def rel_error(torch, got, reference):
    got = got.double()
    reference = reference.double()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return float((got - reference).norm() / reference.norm())


# Relative-error limits against a float64 reference (see docs/validate.md).
MATMUL_TOLERANCE = {"bfloat16": 2e-2, "float16": 5e-3, "tf32": 5e-3, "float32": 1e-4}


def bench_matmul(b):
    torch = b.torch
    if b.cpu_mode:
        plan = [("bfloat16", 128), ("float32", 128)]
    elif b.quick:
        plan = [("bfloat16", 8192), ("float16", 8192), ("tf32", 8192)]
    else:
        plan = [
            ("bfloat16", 8192),
            ("bfloat16", 4096),
            ("bfloat16", 2048),
            ("float16", 8192),
            ("float16", 4096),
            ("tf32", 8192),
            ("tf32", 4096),
            ("float32", 4096),
        ]
    results = []
    saved_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        for dtype_name, n in plan:
            results.append(matmul_case(b, dtype_name, n))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved_tf32
    return {"cases": results}


def matmul_case(b, dtype_name, n):
    torch = b.torch
    case = {"dtype": dtype_name, "m": n, "n": n, "k": n}
    try:
        # tf32 is float32 storage with TF32 tensor-core math; float32 is full-precision math.
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        dtype = torch.float32 if dtype_name in ("tf32", "float32") else getattr(torch, dtype_name)
        element = torch.tensor([], dtype=dtype).element_size()
        sets = b.rotation(2 * n * n * element)
        a_sets = [b.randn((n, n), dtype) for _ in range(sets)]
        b_sets = [b.randn((n, n), dtype) for _ in range(sets)]
        # Correctness: poisoned output, every element written, rows checked against float64.
        out = torch.full((n, n), float("nan"), device=b.device, dtype=dtype)
        torch.matmul(a_sets[0], b_sets[0], out=out)
        rows = min(n, 64)
        reference = a_sets[0][:rows].double() @ b_sets[0].double()
        case["relError"] = rel_error(torch, out[:rows], reference)
        case["allWritten"] = bool(torch.isfinite(out).all())
        case["ok"] = case["allWritten"] and case["relError"] < MATMUL_TOLERANCE[dtype_name]
        del out, reference
        timing = b.time_ms(lambda i: torch.matmul(a_sets[i % sets], b_sets[i % sets]))
        case.update(timing)
        case["rotatedSets"] = sets
        case["tflops"] = 2.0 * n * n * n / (timing["medianMs"] * 1e-3) / 1e12
        # Dropped, not del'd: the timed lambdas above hold these names (pyflakes reads del there as undefined).
        a_sets = b_sets = None
    except Exception as exc:
        case["error"] = error_text(exc)
    finally:
        empty_cache(b)
    return case


def empty_cache(b):
    if not b.cpu_mode:
        b.torch.cuda.empty_cache()


def bench_membw(b):
    """A large device-to-device copy; bytes moved = read + write."""
    torch = b.torch
    if b.cpu_mode:
        size = 64 << 20
    else:
        size = int(min(2 << 30, b.free_bytes * 0.2))
        size = max(size, min(8 * b.l2_bytes, int(b.free_bytes * 0.4)))
    count = size // 4
    src = torch.randn(count, device=b.device)
    dst = torch.full((count,), float("nan"), device=b.device)
    dst.copy_(src)
    ok = bool(torch.equal(dst, src))
    timing = b.time_ms(lambda i: dst.copy_(src), budget_ms=300)
    moved = 2 * count * 4
    result = {"bytes": count * 4, "bytesMoved": moved, "ok": ok}
    result.update(timing)
    result["gbps"] = moved / (timing["medianMs"] * 1e-3) / 1e9
    src = dst = None  # the timed lambda holds these names: dropped, not del'd
    empty_cache(b)
    return result


def bench_transfer(b):
    """Pinned host <-> device copies (PCIe, or NVLink-C2C on Grace systems)."""
    torch = b.torch
    size = (16 << 20) if b.cpu_mode else (256 << 20)
    out = {"bytes": size}
    try:
        host = torch.randint(0, 256, (size,), dtype=torch.uint8)
        pinned = host.pin_memory() if not b.cpu_mode else host
        out["pinned"] = bool(pinned.is_pinned()) if not b.cpu_mode else False
    except Exception as exc:
        out["error"] = "could not pin %d MiB of host memory: %s" % (size >> 20, error_text(exc))
        return out
    device_buffer = torch.empty(size, dtype=torch.uint8, device=b.device)
    back = torch.zeros(size, dtype=torch.uint8).pin_memory() if not b.cpu_mode else torch.zeros(size, dtype=torch.uint8)
    for direction in ("h2d", "d2h"):
        try:
            if direction == "h2d":
                run = lambda i: device_buffer.copy_(pinned, non_blocking=True)  # noqa: E731
            else:
                run = lambda i: back.copy_(device_buffer, non_blocking=True)  # noqa: E731
            timing = b.time_ms(run, budget_ms=600, max_reps=100)
            b.sync()
            record = dict(timing)
            record["gbps"] = size / (timing["medianMs"] * 1e-3) / 1e9
            out[direction] = record
        except Exception as exc:
            out[direction] = {"error": error_text(exc)}
    b.sync()
    out["ok"] = bool(torch.equal(back[: 1 << 20], host[: 1 << 20]))
    device_buffer = None  # the timed lambdas hold this name: dropped, not del'd
    empty_cache(b)
    return out


def sdpa_backends(torch):
    """[(name, enum-or-flags)] for the API this torch has."""
    try:
        from torch.nn.attention import SDPBackend

        names = [("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"), ("math", "MATH")]
        return [(name, getattr(SDPBackend, attr, None)) for name, attr in names]
    except ImportError:
        return [("flash", "flash"), ("efficient", "efficient"), ("cudnn", None), ("math", "math")]


def sdpa_context(torch, api, backend):
    if api == "nn.attention":
        from torch.nn.attention import sdpa_kernel

        return sdpa_kernel([backend])
    flags = {"enable_flash": False, "enable_math": False, "enable_mem_efficient": False}
    flags[{"flash": "enable_flash", "efficient": "enable_mem_efficient", "math": "enable_math"}[backend]] = True
    return torch.backends.cuda.sdp_kernel(**flags)


def manual_attention(torch, q, k, v):
    scale = 1.0 / (q.shape[-1] ** 0.5)
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def bench_sdpa(b):
    import warnings

    torch = b.torch
    api = sdpa_api(torch)
    if b.cpu_mode:
        shapes = [(2, 4, 128, 32)]
        dtypes = ["bfloat16"]
    elif b.quick:
        shapes = [(4, 16, 4096, 64)]
        dtypes = ["bfloat16"]
    else:
        shapes = [(8, 16, 1024, 64), (4, 16, 4096, 64), (2, 16, 4096, 128)]
        dtypes = ["bfloat16", "float16"]
    result = {"api": api, "cases": []}
    if api == "none":
        result["error"] = "torch %s has no scaled_dot_product_attention (added in torch 2.0)" % torch.__version__
        return result
    for dtype_name in dtypes:
        for shape in shapes:
            result["cases"].append(sdpa_case(b, api, dtype_name, shape, warnings))
            empty_cache(b)
    return result


def sdpa_case(b, api, dtype_name, shape, warnings):
    torch = b.torch
    batch, heads, seq, dim = shape
    dtype = getattr(torch, dtype_name)
    case = {"dtype": dtype_name, "batch": batch, "heads": heads, "seq": seq, "headDim": dim, "backends": {}}
    case["flops"] = 4.0 * batch * heads * seq * seq * dim
    # Manual attention holds the scores twice (scores and softmax) in the input dtype.
    manual_bytes = 2 * batch * heads * seq * seq * 2
    if manual_bytes > 0.5 * b.free_bytes:
        case["error"] = "skipped: manual attention needs %.1f GiB, more than half the free memory" % (manual_bytes / 2**30)
        return case
    q, k, v = (b.randn((batch, heads, seq, dim), dtype) for _ in range(3))
    # Reference on the first batch entry in float32: correctness of every variant below.
    reference = manual_attention(torch, q[:1].float(), k[:1].float(), v[:1].float())
    tolerance = 3e-2 if dtype_name == "bfloat16" else 1e-2

    def measure(function):
        got = function()
        error = rel_error(torch, got[:1], reference)
        timing = b.time_ms(lambda i: function(), budget_ms=300, max_reps=100)
        timing["relError"] = error
        timing["ok"] = error < tolerance
        timing["tflops"] = case["flops"] / (timing["medianMs"] * 1e-3) / 1e12
        return timing

    try:
        case["manual"] = measure(lambda: manual_attention(torch, q, k, v))
    except Exception as exc:
        case["manual"] = {"error": error_text(exc)}
    empty_cache(b)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for name, backend in sdpa_backends(torch):
        if backend is None:
            case["backends"][name] = {"available": False, "reason": "torch %s has no %s backend" % (torch.__version__, name)}
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with sdpa_context(torch, api, backend):
                    record = measure(lambda: sdpa(q, k, v))
                record["available"] = True
            except Exception as exc:
                # torch says why a backend refused in warnings ("Flash attention requires ...").
                reasons = [str(w.message).strip() for w in caught]
                reasons = [r for r in reasons if r] or [error_text(exc)]
                record = {"available": False, "reason": "; ".join(dict.fromkeys(reasons))[:600]}
        if record.get("available") and "medianMs" in case.get("manual", {}):
            record["speedup"] = case["manual"]["medianMs"] / record["medianMs"]
        case["backends"][name] = record
        empty_cache(b)
    try:
        record = measure(lambda: sdpa(q, k, v))
        if "medianMs" in case.get("manual", {}):
            record["speedup"] = case["manual"]["medianMs"] / record["medianMs"]
        case["default"] = record
    except Exception as exc:
        case["default"] = {"error": error_text(exc)}
    q = k = v = reference = None  # the measured lambdas hold these names: dropped, not del'd
    return case


def nccl_worker(rank, world, init_file, result_file, sizes, backend, iterations):
    """One process per GPU: all-reduce timed with CUDA events; rank 0 writes the medians."""
    import torch
    import torch.distributed as dist

    cpu = backend == "gloo"
    if not cpu:
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=world)
    device = torch.device("cpu") if cpu else torch.device("cuda", rank)
    rows = []
    for size in sizes:
        tensor = torch.randn(size // 4, device=device)
        for _ in range(5):
            dist.all_reduce(tensor)
        if not cpu:
            torch.cuda.synchronize()
        dist.barrier()
        times = []
        for _ in range(iterations):
            if cpu:
                started = time.perf_counter()
                dist.all_reduce(tensor)
                times.append((time.perf_counter() - started) * 1000)
            else:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                dist.all_reduce(tensor)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
        times.sort()
        median = torch.tensor([times[len(times) // 2]], device=device)
        # The slowest rank's median is the collective's time.
        dist.all_reduce(median, op=dist.ReduceOp.MAX)
        rows.append({"bytes": size, "medianMs": float(median.item()), "iterations": iterations})
        del tensor
    if rank == 0:
        with open(result_file, "w") as handle:
            json.dump(rows, handle)
    dist.barrier()
    dist.destroy_process_group()


def bench_nccl(b):
    torch = b.torch
    if b.cpu_mode:
        world, backend, sizes, iterations = 2, "gloo", [1 << 20], 5
    else:
        world = torch.cuda.device_count()
        if world < 2:
            return {"skipped": "one GPU visible: an all-reduce needs at least two", "worldSize": world}
        import torch.distributed as dist

        if not dist.is_available() or not dist.is_nccl_available():
            return {"skipped": "this torch was built without NCCL", "worldSize": world}
        backend, iterations = "nccl", 20
        sizes = [256 << 20] if b.quick else [64 << 20, 256 << 20, 1 << 30]
    import torch.multiprocessing as mp

    workdir = tempfile.mkdtemp(prefix="gpuprep-nccl-")
    init_file = os.path.join(workdir, "init")
    result_file = os.path.join(workdir, "result.json")
    mp.spawn(nccl_worker, args=(world, init_file, result_file, sizes, backend, iterations), nprocs=world, join=True)
    with open(result_file) as handle:
        rows = json.load(handle)
    for row in rows:
        algbw = row["bytes"] / (row["medianMs"] * 1e-3) / 1e9
        row["algbwGBs"] = algbw
        row["busbwGBs"] = algbw * 2 * (world - 1) / world
    return {"worldSize": world, "backend": backend, "sizes": rows}


BENCH_FUNCTIONS = {
    "sdpa": bench_sdpa,
    "matmul": bench_matmul,
    "membw": bench_membw,
    "transfer": bench_transfer,
    "nccl": bench_nccl,
}


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def child_bench(options):
    import warnings

    warnings.simplefilter("ignore")
    wanted = options.get("wanted") or BENCHMARKS
    try:
        import torch
    except Exception as exc:
        for name in wanted:
            emit({"event": "result", "result": {"name": name, "skipped": "torch does not import: %s" % error_text(exc)}})
        return
    cpu_mode = options.get("device") == "cpu"
    reason = None
    if not cpu_mode:
        try:
            if not torch.cuda.is_available():
                reason = "no CUDA device: torch.cuda.is_available() is False" + (
                    " (this torch is a CPU-only build)" if not torch.version.cuda else ""
                )
        except Exception as exc:
            reason = "CUDA does not initialise: %s" % error_text(exc)
    bench = None
    if reason is None:
        torch.manual_seed(0)
        bench = Bench(torch, options)
    for name in wanted:
        if reason is not None:
            emit({"event": "result", "result": {"name": name, "skipped": reason}})
            continue
        emit({"event": "start", "name": name})
        started = time.time()
        try:
            data = BENCH_FUNCTIONS[name](bench)
            data = {"name": name, "data": data}
        except Exception as exc:
            data = {"name": name, "error": error_text(exc)}
        data["seconds"] = round(time.time() - started, 3)
        emit({"event": "result", "result": data})


CHILDREN = {"model": child_model, "bench": child_bench}


def main(argv):
    if len(argv) >= 3 and argv[1] == "--child":
        options = json.loads(argv[3]) if len(argv) > 3 else {}
        CHILDREN[argv[2]](options)
        return 0
    nonce = FRAME["take_nonce"](globals())  # first, before any child starts
    options = json.loads(argv[1]) if len(argv) > 1 else {}
    document = parent_main(options)
    if nonce is None:
        print(json.dumps(document))  # a person running validate.py by hand
    else:
        FRAME["emit"](nonce, "validate", document)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
