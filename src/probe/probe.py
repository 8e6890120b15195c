# gpuprep probe: run by the *target* Python (any CPython >= 3.8, stdlib only); prints one JSON
# document {"host": ..., "python": ...} matching ProbeOutputSchema in src/facts/schema.ts.
#
# CLI contract:  python3 - [--fast] [--gpu-health] [--child-timeout SECONDS] [--nonce HEX]
#                          [--extensions "MODULE=DIST,... ..."] [--import MODULE]... < probe.py
#   --extensions: the known extensions (gpuprep passes the KB's import-checks table), each
#   import-checked when installed; --import: a module the user named, import-checked in any case.
#   --gpu-health: also the passive GPU health counters (host.gpuHealth; fleet asks for them).
#   stdout: the JSON document on one line; run by gpuprep, that line is the payload frame
#   "@gpuprep-frame NONCE probe {...}" of frame.py, with the nonce from GPUPREP_FRAME_CHANNEL (a
#   line gpuprep puts before this file), so a sitecustomize or extension that prints a {"host"
#   line cannot pass for the result. --nonce HEX is still read for callers that put it in argv.
#   stderr: nothing on success; exit 0.
#   exit 3 + one line on stderr: this Python is too old or the arguments are wrong.
#
# It changes nothing: no installs, no writes (bytecode writing is off here and in children; the
# cache-directory check creates one empty entry and removes it at once).
# Risky imports (torch, GPU extensions) run only in child processes (torch_env.py, shared with
# validate), all started in parallel, each with a time limit, so a segfault or a hang becomes a
# fact instead of killing the probe.
# The current directory comes off sys.path before any import (src/transports/python-guard.ts).
import sys; sys.path[:] = [p for p in sys.path if p != ""]  # noqa: E702

sys.dont_write_bytecode = True
if sys.version_info < (3, 8):
    sys.stderr.write("gpuprep probe needs Python >= 3.8, this is %s\n" % sys.version.split()[0])
    sys.exit(3)

import json
import os
import platform
import re
import shutil
import signal
import site
import stat
import subprocess
import sysconfig
import threading
import time

PROBE_VERSION = 1
START = time.monotonic()

ENV_NAMES = {
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LD_PRELOAD",
    "PYTORCH_CUDA_ALLOC_CONF", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "HF_HOME",
    "TRANSFORMERS_CACHE", "TORCH_HOME", "TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "CUDA_PATH",
    "CUDA_CACHE_PATH", "CUDA_VERSION", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PATH",
    "XDG_CACHE_HOME", "OMP_NUM_THREADS", "SINGULARITY_CONTAINER", "APPTAINER_CONTAINER",
    # bitsandbytes loads the CUDA library this names instead of torch's (rule debug-env-left-on).
    "BNB_CUDA_VERSION",
    # Where the JIT caches go by default (cache_dir_facts): HOME for Triton and the CUDA JIT cache,
    # TMPDIR for Inductor.
    "HOME", "TMPDIR",
}
# Prefixes of variables that CUDA images, NGC images (NVIDIA_PYTORCH_VERSION, PYTORCH_BUILD_VERSION,
# NVIDIA_BUILD_ID, NVIDIA_REQUIRE_CUDA, NV_CUDA_LIB_VERSION ...), uv, pip and NCCL read or set.
ENV_PREFIXES = ("UV_", "PIP_", "NCCL_", "NGC_", "NVIDIA_", "NV_", "PYTORCH_", "CUDA_", "CUDNN_",
                "TORCH_", "TORCHINDUCTOR_", "TRITON_", "HF_", "CONDA_", "CUBLAS_", "NCCL")
# Snapshots get shared in bug reports: never capture credentials.
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "_KEY", "APIKEY")

NGC_CONSTRAINT_FILE = "/etc/pip/constraint.txt"  # NGC PyTorch images since 25.03 (release notes)


def elapsed_ms(since):
    return round((time.monotonic() - since) * 1000, 1)


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


READ_CAP = 4 * 1024 * 1024


def read_text(path, limit=None):
    """A regular file's text, at most `limit` (else 4 MiB) bytes; None for anything else. Opened
    with O_NONBLOCK and checked with fstat on the descriptor, as util/safe-read.ts does: a FIFO
    named METADATA in site-packages made doctor wait 120 s (issue 28), /dev/zero would never end."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        want = READ_CAP if limit is None else min(limit, READ_CAP)
        chunks = []
        while want > 0:
            chunk = os.read(fd, min(want, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def tail(text, count=2000):
    if not text:
        return None
    text = text.strip()
    return text[-count:] if text else None


# ---------------------------------------------------------------- child processes


def child_env():
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    return env


# Output kept per child stream: results are small; a flood must not grow the probe's memory.
CHILD_OUTPUT_CAP = 4 * 1024 * 1024
# After a child exits, how long its pipes may take to reach EOF before a holder is assumed.
CHILD_DRAIN_GRACE = 0.5


class Child:
    """A command started now and collected later, killed at its deadline.

    Collection waits for the child's exit, not for EOF on its pipes: an import that leaves a
    daemon behind (holding the pipes or not) is recorded as leftProcesses, and the daemon is
    killed with the child's process group instead of keeping the probe waiting.
    """

    def __init__(self, argv, timeout):
        self.started = time.monotonic()
        self.timeout = timeout
        self.result = None
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=child_env(), start_new_session=True,
            )
        except OSError as error:
            self.proc = None
            self.result = {"spawnError": str(error)}
            return
        self.out, self.err = bytearray(), bytearray()
        self.readers = [threading.Thread(target=read_capped, args=(self.proc.stdout, self.out), daemon=True),
                        threading.Thread(target=read_capped, args=(self.proc.stderr, self.err), daemon=True)]
        for reader in self.readers:
            reader.start()
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self):
        try:
            self.proc.wait(timeout=self.timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            self.proc.wait()
            timed_out = True
        held = not join_all(self.readers, CHILD_DRAIN_GRACE)
        # The child is reaped; its pid names its process group until the last member is gone.
        left = held or group_alive(self.proc.pid)
        if left:
            kill_group(self.proc)
            join_all(self.readers, CHILD_DRAIN_GRACE)
        self.result = {
            "stdout": bytes(self.out).decode("utf-8", "replace"),
            "stderr": bytes(self.err).decode("utf-8", "replace"),
            "code": self.proc.returncode,
            "timedOut": timed_out,
            "leftProcesses": bool(left and not timed_out),
            "durationMs": elapsed_ms(self.started),
        }

    def collect(self):
        if self.proc is not None:
            self.thread.join()
        return self.result


def read_capped(stream, into):
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        room = CHILD_OUTPUT_CAP - len(into)
        if room > 0:
            into.extend(chunk[:room])


def join_all(threads, grace):
    deadline = time.monotonic() + grace
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass


# The torch-environment child (src/probe/torch_env.py, shared with validate.py). This payload
# travels alone on stdin, so the build puts the file's text here; run from src/ it is missing.
TORCH_ENV_SOURCE = None  # @inline torch_env.py
if TORCH_ENV_SOURCE is None:
    sys.stderr.write("gpuprep probe: torch_env.py is not inlined; run the built copy under dist/\n")
    sys.exit(3)
# Its top level only defines names: the parent reads RESULT_MARK from the same text the child runs.
TORCH_ENV = {"__name__": "gpuprep_torch_env"}
exec(compile(TORCH_ENV_SOURCE, "torch_env.py", "exec"), TORCH_ENV)
RESULT_MARK = TORCH_ENV["RESULT_MARK"]
# The payload frame (src/probe/frame.py, shared with validate.py and memory.py).
FRAME_SOURCE = None  # @inline frame.py
FRAME = {"__name__": "gpuprep_frame"}
exec(compile(FRAME_SOURCE or "", "frame.py", "exec"), FRAME)


def torch_env_child(options, timeout):
    """torch_env.py in a child of its own: {} for the torch facts, {"import": ...} for one module."""
    return Child([sys.executable, "-c", TORCH_ENV_SOURCE, json.dumps(options)], timeout)


def child_run(raw, parse_result=True):
    """ChildRunSchema fields (+ the parsed result) from a collected python child."""
    run = {"status": "ok", "durationMs": 0, "exitCode": None, "signal": None, "error": None,
           "stderrTail": None, "leftProcesses": False}
    if "spawnError" in raw:
        run.update(status="error", error="could not start: " + raw["spawnError"])
        return run, None
    run["durationMs"] = raw["durationMs"]
    run["stderrTail"] = tail(raw["stderr"])
    run["leftProcesses"] = raw.get("leftProcesses", False)
    code = raw["code"]
    payload = None
    for line in raw["stdout"].splitlines():
        if line.startswith(RESULT_MARK):
            try:
                payload = json.loads(line[len(RESULT_MARK):])
            except ValueError:
                payload = None
    if raw["timedOut"]:
        run.update(status="timeout", error="no answer within %gs; killed" % (raw["durationMs"] / 1000.0))
        return run, None
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "SIG%d" % -code
        run.update(status="crash", signal=name, error="killed by " + name)
        return run, None
    run["exitCode"] = code
    if payload is not None and payload.get("error"):
        run.update(status="error", error=payload["error"])
        return run, payload
    if code != 0 or payload is None:
        last = (run["stderrTail"] or "").splitlines()
        run.update(status="error", error=last[-1] if last else "exited with code %s" % code)
        return run, payload
    return run, payload


# ---------------------------------------------------------------- host


def nvidia_number(value):
    # nounits gives "81559"; tolerate "81559 MiB" from drivers or wrappers that ignore nounits.
    match = re.match(r"^\s*(\d+(?:\.\d+)?)", value)
    if not match:
        return None
    return float(match.group(1)) if "." in match.group(1) else int(match.group(1))


def nvidia_string(value):
    value = value.strip()
    return None if not value or value.startswith("[") or value == "N/A" else value


NVIDIA_QUERY = ("index,name,uuid,compute_cap,memory.total,mig.mode.current,persistence_mode,pci.bus_id,"
                "driver_version,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,"
                "pcie.link.width.current")


def start_nvidia_smi():
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    query = Child([exe, "--query-gpu=" + NVIDIA_QUERY, "--format=csv,noheader,nounits"], 20)
    header = Child([exe], 20)
    return query, header


def nvidia_facts(children):
    facts = {"status": "ok", "error": None, "driverVersion": None, "cudaVersion": None, "gpus": [],
             "kernelModule": None}
    module = read_text("/proc/driver/nvidia/version", 4096)
    if module:
        facts["kernelModule"] = module.splitlines()[0].strip()
    if children is None:
        facts.update(status="not-found", error="nvidia-smi is not on PATH")
        return facts
    query, header = (child.collect() for child in children)
    if "spawnError" in query or query["timedOut"] or query["code"] != 0:
        facts["status"] = "failed"
        if "spawnError" in query:
            facts["error"] = query["spawnError"]
        elif query["timedOut"]:
            facts["error"] = "nvidia-smi did not answer within 20s"
        else:
            text = (query["stdout"] + "\n" + query["stderr"]).strip()
            facts["error"] = (text.splitlines()[0] if text else "nvidia-smi exited with %s" % query["code"])
        return facts
    for line in query["stdout"].splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 13 or cells[0] == "index":  # short or a header line
            continue
        facts["driverVersion"] = nvidia_string(cells[8])
        facts["gpus"].append({
            "index": nvidia_number(cells[0]) or 0,
            "name": cells[1],
            "uuid": nvidia_string(cells[2]),
            "computeCapability": nvidia_string(cells[3]),
            "memoryTotalMiB": nvidia_number(cells[4]),
            "migMode": nvidia_string(cells[5]),
            "persistenceMode": nvidia_string(cells[6]),
            "pciBusId": nvidia_string(cells[7]),
            "pcieLinkGenMax": nvidia_number(cells[9]),
            "pcieLinkWidthMax": nvidia_number(cells[10]),
            "pcieLinkGenCurrent": nvidia_number(cells[11]),
            "pcieLinkWidthCurrent": nvidia_number(cells[12]),
        })
    if "spawnError" not in header and not header["timedOut"]:
        match = re.search(r"CUDA Version:\s*([0-9.]+)", header["stdout"])
        facts["cudaVersion"] = match.group(1) if match else None
        if facts["driverVersion"] is None:
            match = re.search(r"Driver Version:\s*([0-9.]+)", header["stdout"])
            facts["driverVersion"] = match.group(1) if match else None
    return facts


# ---------------------------------------------------------------- passive GPU health (--gpu-health)
# Read-only counters the driver keeps, as DCGM's health watches and NVIDIA's debug guide read them:
# ECC counts, retired pages, remapped rows, clock event (throttle) reasons and the fabric state
# from `nvidia-smi -q -x`, NVLink error counters from `nvidia-smi nvlink -e`, Xid events from the
# kernel log (`dmesg`), and `dcgmi health -c -j` where DCGM is installed. Nothing is run on the GPU.


def start_gpu_health():
    smi = shutil.which("nvidia-smi")
    dmesg = shutil.which("dmesg")
    dcgmi = shutil.which("dcgmi")
    return {
        "xml": Child([smi, "-q", "-x"], 20) if smi else None,
        "nvlink": Child([smi, "nvlink", "-e"], 20) if smi else None,
        "dmesg": Child([dmesg], 20) if dmesg else None,
        "dcgmi": Child([dcgmi, "health", "-c", "-j"], 20) if dcgmi else None,
    }


def smi_count(text):
    """'0' -> 0, '3 bank(s)' -> 3; N/A, [N/A] and empty -> None."""
    match = re.match(r"^\s*(\d+)", text or "")
    return int(match.group(1)) if match else None


def smi_flag(text):
    value = (text or "").strip().lower()
    return True if value in ("yes", "active") else False if value in ("no", "not active") else None


def xml_text(node, path):
    found = node.find(path) if node is not None else None
    return found.text.strip() if found is not None and found.text is not None else None


def ecc_counts(gpu, section):
    """Correctable and uncorrectable counts of one ECC section, SRAM and DRAM summed (older
    drivers name them single_bit/double_bit)."""
    node = gpu.find("ecc_errors/" + section)
    if node is None:
        return {"correctable": None, "uncorrectable": None}
    sums = {"correctable": None, "uncorrectable": None}
    for child in node:
        tag = child.tag
        kind = ("uncorrectable" if "uncorrectable" in tag or tag.startswith("double_bit")
                else "correctable" if "correctable" in tag or tag.startswith("single_bit") else None)
        count = smi_count(child.text) if kind else None
        if count is None:
            for leaf in child:  # <single_bit><total>0</total></single_bit>
                if leaf.tag == "total":
                    count = smi_count(leaf.text)
        if kind and count is not None:
            sums[kind] = (sums[kind] or 0) + count
    return sums


def gpu_health_entry(gpu):
    reasons = gpu.find("clocks_event_reasons")
    if reasons is None:
        reasons = gpu.find("clocks_throttle_reasons")  # drivers before 535
    active = []
    for child in (reasons if reasons is not None else []):
        if smi_flag(child.text):
            active.append(re.sub(r"^clocks_(event|throttle)_reason_", "", child.tag))
    remap = gpu.find("remapped_rows")
    return {
        "pciBusId": xml_text(gpu, "pci/pci_bus_id") or gpu.get("id"),
        "uuid": xml_text(gpu, "uuid"),
        "eccMode": xml_text(gpu, "ecc_mode/current_ecc"),
        "eccVolatile": ecc_counts(gpu, "volatile"),
        "eccAggregate": ecc_counts(gpu, "aggregate"),
        "retiredPages": {
            "singleBit": smi_count(xml_text(gpu, "retired_pages/multiple_single_bit_retirement/retired_count")),
            "doubleBit": smi_count(xml_text(gpu, "retired_pages/double_bit_retirement/retired_count")),
            "pending": smi_flag(xml_text(gpu, "retired_pages/pending_retirement")),
        },
        "remappedRows": None if remap is None else {
            "correctable": smi_count(xml_text(remap, "remapped_row_corr")),
            "uncorrectable": smi_count(xml_text(remap, "remapped_row_unc")),
            "pending": smi_flag(xml_text(remap, "remapped_row_pending")),
            "failure": smi_flag(xml_text(remap, "remapped_row_failure")),
        },
        "clockEventReasons": active,
        "fabric": {"state": nvidia_string(xml_text(gpu, "fabric/state") or ""),
                   "status": nvidia_string(xml_text(gpu, "fabric/status") or "")},
        "nvlinkErrors": None,
    }


def nvlink_errors(text):
    """`nvidia-smi nvlink -e`: per GPU (in order), each counter summed over the links."""
    per_gpu = []
    for line in text.splitlines():
        if re.match(r"^GPU \d+:", line):
            per_gpu.append({})
            continue
        for link, name, value in re.findall(r"Link (\d+): ([A-Za-z][A-Za-z -]*?): (\d+)", line):
            if per_gpu:
                key = name.strip()
                per_gpu[-1][key] = per_gpu[-1].get(key, 0) + int(value)
    return per_gpu


XID_LINE = re.compile(r"NVRM: Xid \((?:PCI:)?([^)]*)\): (\d+),\s*(.*)")


def xid_events(text):
    events = {}
    for line in text.splitlines():
        match = XID_LINE.search(line)
        if not match:
            continue
        key = (match.group(1), int(match.group(2)))
        entry = events.setdefault(key, {"pci": key[0], "code": key[1], "count": 0, "last": ""})
        entry["count"] += 1
        entry["last"] = match.group(3).strip()[:200]
    return sorted(events.values(), key=lambda e: (e["pci"], e["code"]))


def collected_error(raw, what):
    if raw is None:
        return "%s is not on PATH" % what
    if "spawnError" in raw:
        return raw["spawnError"]
    if raw["timedOut"]:
        return "%s did not answer within 20s" % what
    if raw["code"] != 0:
        text = (raw["stderr"] + "\n" + raw["stdout"]).strip()
        return text.splitlines()[0][:200] if text else "%s exited with %s" % (what, raw["code"])
    return None


def gpu_health_facts(started):
    import xml.etree.ElementTree as ElementTree
    raw = {name: child.collect() if child else None for name, child in started.items()}
    facts = {"status": "ok", "error": collected_error(raw["xml"], "nvidia-smi"), "gpus": [],
             "xids": {"status": "ok", "error": None, "events": []},
             "dcgm": {"status": "not-installed", "overall": None, "exitCode": None, "output": None}}
    if facts["error"] is None:
        try:
            root = ElementTree.fromstring(raw["xml"]["stdout"])
            facts["gpus"] = [gpu_health_entry(gpu) for gpu in root.findall("gpu")]
        except ElementTree.ParseError as error:
            facts["error"] = "nvidia-smi -q -x printed no readable XML (%s)" % error
    if facts["error"] is not None:
        facts["status"] = "failed"
    if raw["nvlink"] is not None and collected_error(raw["nvlink"], "nvidia-smi nvlink") is None:
        for entry, counters in zip(facts["gpus"], nvlink_errors(raw["nvlink"]["stdout"])):
            entry["nvlinkErrors"] = counters
    error = collected_error(raw["dmesg"], "dmesg")
    if error is None:
        facts["xids"]["events"] = xid_events(raw["dmesg"]["stdout"])
    else:
        facts["xids"].update(status="unreadable", error=error)
    if raw["dcgmi"] is not None:
        dcgm = raw["dcgmi"]
        text = dcgm.get("stdout", "") + dcgm.get("stderr", "")
        match = re.search(r'"?Overall Health"?\s*[:|]\s*"?([A-Za-z]+)', text)
        facts["dcgm"] = {"status": "failed" if collected_error(dcgm, "dcgmi") else "ok",
                         "overall": match.group(1) if match else None,
                         "exitCode": dcgm.get("code"), "output": tail(text, 1000) or None}
    return facts


def os_release():
    fields = {}
    text = read_text("/etc/os-release") or read_text("/usr/lib/os-release") or ""
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            fields[key.strip()] = value.strip().strip('"').strip("'")
    return {
        "system": platform.system(),
        "release": platform.release(),
        "distroId": fields.get("ID"),
        "distroVersion": fields.get("VERSION_ID"),
        "prettyName": fields.get("PRETTY_NAME"),
        "glibc": glibc_version(),
    }


def glibc_version():
    # The manylinux tags a wheel installer accepts here (PEP 600); None on musl or when unknown.
    try:
        lib, version = platform.libc_ver()
        return version if lib == "glibc" and version else None
    except Exception:
        return None


def meminfo_bytes(field):
    # /proc/meminfo prints kB (KiB). MemAvailable is what unified-memory GPUs (GB10, Jetson) can
    # really use: cudaMemGetInfo there counts the page cache as used.
    for line in (read_text("/proc/meminfo", 4096) or "").splitlines():
        if line.startswith(field + ":"):
            parts = line.split()
            return int(parts[1]) * 1024
    return None


def mem_total_bytes():
    return meminfo_bytes("MemTotal")


def container_facts():
    markers = []
    runtime = None
    if os.path.exists("/.dockerenv"):
        markers.append("/.dockerenv")
        runtime = "docker"
    if os.path.exists("/run/.containerenv"):
        markers.append("/run/.containerenv")
        runtime = runtime or "podman"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        markers.append("env KUBERNETES_SERVICE_HOST")
        runtime = "kubernetes"
    for name in ("SINGULARITY_CONTAINER", "APPTAINER_CONTAINER"):
        if os.environ.get(name):
            markers.append("env " + name)
            runtime = runtime or "apptainer"
    if os.environ.get("container"):
        markers.append("env container=" + os.environ["container"])
        runtime = runtime or os.environ["container"]
    cgroup = read_text("/proc/1/cgroup", 65536) or ""
    for word, name in (("kubepods", "kubernetes"), ("docker", "docker"), ("containerd", "containerd"),
                       ("libpod", "podman"), ("lxc", "lxc")):
        if word in cgroup:
            markers.append("/proc/1/cgroup mentions " + word)
            runtime = runtime or name
            break
    return {"inContainer": bool(markers), "runtime": runtime, "markers": markers}


def shm_facts():
    try:
        stat = os.statvfs("/dev/shm")
        return {"sizeBytes": stat.f_blocks * stat.f_frsize, "freeBytes": stat.f_bavail * stat.f_frsize}
    except OSError:
        return {"sizeBytes": None, "freeBytes": None}


def ulimit_facts():
    try:
        import resource
    except ImportError:
        empty = {"soft": None, "hard": None}
        return {"memlock": empty, "stack": dict(empty), "nofile": dict(empty)}

    def limit(which):
        try:
            soft, hard = resource.getrlimit(which)
        except (OSError, ValueError):
            return {"soft": None, "hard": None}
        fix = lambda value: "unlimited" if value == resource.RLIM_INFINITY else value  # noqa: E731
        return {"soft": fix(soft), "hard": fix(hard)}

    return {"memlock": limit(resource.RLIMIT_MEMLOCK), "stack": limit(resource.RLIMIT_STACK),
            "nofile": limit(resource.RLIMIT_NOFILE)}


def hostname():
    try:
        import socket
        return socket.gethostname() or None
    except Exception:
        return None


def host_facts(nvidia_children):
    return {
        "os": os_release(),
        "hostname": hostname(),
        "cpuArch": platform.machine(),
        "cpuCount": os.cpu_count(),
        "memTotalBytes": mem_total_bytes(),
        "memAvailableBytes": meminfo_bytes("MemAvailable"),
        "nvidia": nvidia_facts(nvidia_children),
        "container": container_facts(),
        "shm": shm_facts(),
        "ulimits": ulimit_facts(),
    }


# ---------------------------------------------------------------- interpreter and distributions


def interpreter_facts():
    prefix, base = sys.prefix, getattr(sys, "base_prefix", sys.prefix)
    in_venv = prefix != base
    cfg = read_text(os.path.join(prefix, "pyvenv.cfg"), 65536) or ""
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        kind = "conda"
    elif in_venv and re.search(r"^\s*uv\s*=", cfg, re.M):
        kind = "uv"
    elif in_venv:
        kind = "venv"
    elif os.path.realpath(prefix) in ("/usr", "/usr/local"):
        kind = "system"
    else:
        kind = "other"
    managed = False
    if not in_venv:
        stdlib = sysconfig.get_paths().get("stdlib")
        managed = bool(stdlib) and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))
    try:
        user_site = site.getusersitepackages()
    except Exception:  # some embedded builds lack it
        user_site = None
    return {
        "executable": sys.executable or "",
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "prefix": prefix,
        "basePrefix": base,
        "kind": kind,
        "sysPath": list(sys.path),
        "userSite": user_site,
        "userSiteEnabled": bool(site.ENABLE_USER_SITE),
        "externallyManaged": managed,
    }


# Requires-Dist lines kept in the snapshot: only those naming these (installed-torch-pin-conflict
# checks them), so a snapshot does not carry every dependency of every package.
PINNED_NAMES = ("torch", "triton", "pytorch-triton")
# "torch ==2.4.0", "torch (==1.13.1)" (Metadata 1.2 style), "triton==3.1.0; platform_system == 'Linux'"
REQUIRES_DIST = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;\s*(.*))?$")


def pinned_requirement(value):
    """A Requires-Dist value naming torch / triton / pytorch-triton with a specifier, split; else None."""
    match = REQUIRES_DIST.match(value)
    if not match or normalize(match.group(1)) not in PINNED_NAMES:
        return None
    specifier = re.sub(r"\s+", "", match.group(2))
    if not specifier:
        return None
    return {"normalizedName": normalize(match.group(1)), "specifier": specifier,
            "marker": (match.group(3) or "").strip() or None, "raw": value.strip()}


def metadata_headers(path):
    """Name, Version and the pinned Requires-Dist lines of a METADATA / PKG-INFO file (headers
    end at the first blank line)."""
    name = version = None
    requires = []
    text = read_text(path, 16384)
    if text is None:
        return None, None, requires
    for line in text.splitlines():
        if not line.strip():
            break
        if line.startswith("Name:") and name is None:
            name = line[5:].strip()
        elif line.startswith("Version:") and version is None:
            version = line[8:].strip()
        elif line.startswith("Requires-Dist:"):
            pinned = pinned_requirement(line[len("Requires-Dist:"):])
            if pinned is not None:
                requires.append(pinned)
    return name, version, requires


def scan_entries(sys_path):
    """(pathIndex, real directory) for each sys.path directory, first occurrence only."""
    seen = set()
    for index, entry in enumerate(sys_path):
        directory = os.path.abspath(entry or os.getcwd())
        real = os.path.realpath(directory)
        if real in seen or not os.path.isdir(real):
            continue
        seen.add(real)
        yield index, entry or directory, real


def distributions(sys_path):
    found = []
    for index, location, real in scan_entries(sys_path):
        try:
            names = os.listdir(real)
        except OSError:
            continue
        candidates = []
        if real.endswith(".egg") and os.path.isfile(os.path.join(real, "EGG-INFO", "PKG-INFO")):
            candidates.append((os.path.join(real, "EGG-INFO", "PKG-INFO"), None))
        for name in names:
            full = os.path.join(real, name)
            if name.endswith(".dist-info"):
                candidates.append((os.path.join(full, "METADATA"), os.path.join(full, "INSTALLER")))
            elif name.endswith(".egg-info"):
                meta = os.path.join(full, "PKG-INFO") if os.path.isdir(full) else full
                installer = os.path.join(full, "INSTALLER") if os.path.isdir(full) else None
                candidates.append((meta, installer))
        for meta, installer_path in candidates:
            name, version, requires = metadata_headers(meta)
            if not name or version is None:
                continue
            installer = (read_text(installer_path, 256) or "").strip() or None if installer_path else None
            dist = {"name": name, "normalizedName": normalize(name), "version": version,
                    "location": location, "installer": installer, "pathIndex": index}
            if requires:
                dist["requires"] = requires
            found.append(dist)
    return found


def duplicates(dists):
    groups = {}
    for dist in dists:
        groups.setdefault(dist["normalizedName"], []).append(dist)
    result = []
    for name in sorted(groups):
        # Two metadata dirs of one version in one place (Debian ships .dist-info + .egg-info) are one.
        entries, seen = [], set()
        for dist in groups[name]:
            if (dist["location"], dist["version"]) not in seen:
                seen.add((dist["location"], dist["version"]))
                entries.append(dist)
        if len(entries) > 1:
            result.append({"normalizedName": name, "entries": [
                {"version": d["version"], "location": d["location"], "pathIndex": d["pathIndex"]}
                for d in entries]})
    return result


def find_package(sys_path, module):
    """The sys.path directory that `import module` would load it from (by files, without importing)."""
    for _, location, real in scan_entries(sys_path):
        package = os.path.join(real, module)
        if os.path.isfile(os.path.join(package, "__init__.py")):
            return location, package
        if os.path.isfile(package + ".py"):
            return location, package + ".py"
        try:
            if any(n.startswith(module + ".") and n.endswith(".so") for n in os.listdir(real)):
                return location, real
        except OSError:
            pass
    return None, None


def version_from_file(path, names):
    text = read_text(path, 65536) or ""
    values = {}
    for name in names:
        # torch >= 2.1 annotates: `cuda: Optional[str] = '13.0'`; older files have `cuda = '11.8'`.
        match = re.search(r"^%s\s*(?::[^=\n]+)?=\s*(?:['\"]([^'\"]*)['\"]|(None))" % name, text, re.M)
        if match:
            values[name] = match.group(1) if match.group(2) is None else None
    return values


CUDA_LIB = re.compile(r"(cuda|cudnn|nccl|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvjitlink|cupti)")


def torch_static(sys_path):
    location, package = find_package(sys_path, "torch")
    if location is None or not os.path.isdir(package):
        return None
    values = version_from_file(os.path.join(package, "version.py"), ["__version__", "cuda", "git_version"])
    if not values.get("__version__"):
        return None
    try:
        libs = sorted(n for n in os.listdir(os.path.join(package, "lib")) if CUDA_LIB.search(n))
    except OSError:
        libs = []
    return {"version": values["__version__"], "cudaVersion": values.get("cuda"),
            "gitVersion": values.get("git_version"), "location": location, "cudaLibraries": libs}


def numpy_static(sys_path, dists):
    location, package = find_package(sys_path, "numpy")
    if location is None:
        return None
    for dist in dists:
        if dist["normalizedName"] == "numpy" and dist["location"] == location:
            return {"version": dist["version"], "location": location}
    values = version_from_file(os.path.join(package, "version.py"), ["version", "__version__"])
    version = values.get("version") or values.get("__version__")
    return {"version": version, "location": location} if version else None


# ---------------------------------------------------------------- live checks (children)

def skipped(reason):
    return {"status": "skipped", "durationMs": 0, "exitCode": None, "signal": None, "error": reason,
            "stderrTail": None, "leftProcesses": False}


def installed_extensions(sys_path, known):
    """(module, location, distribution names) of the known extensions present, found by files only."""
    found = []
    for module, dist_names in known:
        location, _ = find_package(sys_path, module)
        if location is not None:
            found.append((module, location, dist_names))
    return found


def owning_distribution(dists, location, dist_names):
    same_place = [d for d in dists if d["normalizedName"] in dist_names and d["location"] == location]
    anywhere = [d for d in dists if d["normalizedName"] in dist_names]
    return (same_place or anywhere or [None])[0]


# ---------------------------------------------------------------- env and constraints


def redact(value):
    # https://user:password@host/... -> https://***@host/...
    return re.sub(r"(://)[^/@\s]+@", r"\1***@", value)


def env_facts():
    env = {}
    for name, value in os.environ.items():
        if name in ENV_NAMES or name.startswith(ENV_PREFIXES):
            if any(word in name.upper() for word in SECRET_WORDS):
                continue
            env[name] = redact(value)
    return env


def pip_config_files():
    files = ["/etc/pip.conf", "/etc/xdg/pip/pip.conf"]
    home = os.path.expanduser("~")
    files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(home, ".config", "pip", "pip.conf"),
              os.path.join(sys.prefix, "pip.conf")]
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(os.environ["PIP_CONFIG_FILE"])
    return files


def constraint_sources():
    sources = []
    for name in ("PIP_CONSTRAINT", "UV_CONSTRAINT"):
        for path in (os.environ.get(name) or "").split():
            sources.append((path, name))
    import configparser
    for conf in pip_config_files():
        if not os.path.isfile(conf):
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(conf)
        except configparser.Error:
            continue
        for section in ("global", "install"):
            if parser.has_option(section, "constraint"):
                for path in parser.get(section, "constraint").split():
                    sources.append((path, "pip.conf %s [%s]" % (conf, section)))
    sources.append((NGC_CONSTRAINT_FILE, "NGC PyTorch image location"))
    return sources


PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def constraint_files():
    result, seen = [], set()
    for path, origin in constraint_sources():
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        pins = []
        for raw in (read_text(path) or "").splitlines():
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith(("#", "-")):
                continue
            match = PIN.match(line)
            if match:
                pins.append({"name": match.group(1), "normalizedName": normalize(match.group(1)),
                             "spec": match.group(3).strip(), "raw": raw.strip()})
        result.append({"path": path, "origin": origin, "pins": pins})
    return result


# ---------------------------------------------------------------- build toolkit and JIT caches

# nvcc --version answers in milliseconds; a wrapper that hangs must not hold the probe.
NVCC_TIMEOUT = 5


def resolve_cuda_home():
    """(home, how it was found) as torch.utils.cpp_extension._find_cuda_home() resolves it on Linux:
    CUDA_HOME, else CUDA_PATH (an `or` of the two, so an empty CUDA_HOME falls through), else the
    directory above the bin/ of the nvcc on PATH, else /usr/local/cuda when it exists.
    Source: pytorch v1.13.1 torch/utils/cpp_extension.py (the file Debian's python3-torch ships),
    the same order at pytorch/pytorch@26e792905bbc588fde825ef283503389673ecae1 and in later
    releases (shutil.which("nvcc") in place of `which nvcc`)."""
    value = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if value is not None:
        # CUDA_HOME="" and CUDA_PATH="" give "": torch then has no CUDA_HOME at all.
        return value or None, "CUDA_HOME" if os.environ.get("CUDA_HOME") else "CUDA_PATH"
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        return os.path.dirname(os.path.dirname(nvcc)), "nvcc-on-path"
    if os.path.exists("/usr/local/cuda"):
        return "/usr/local/cuda", "default"
    return None, None


def start_toolkit():
    """The toolkit a source build would use, with its nvcc --version started (collected later)."""
    home, source = resolve_cuda_home()
    facts = {"home": home, "source": source, "nvcc": None, "release": None, "error": None}
    if home is None:
        return facts, None
    # cpp_extension runs os.path.join(CUDA_HOME, "bin", "nvcc") --version, not the nvcc on PATH.
    nvcc = os.path.join(home, "bin", "nvcc")
    if not os.path.isfile(nvcc):
        facts["error"] = "no bin/nvcc under " + home
        return facts, None
    facts["nvcc"] = nvcc
    return facts, Child([nvcc, "--version"], NVCC_TIMEOUT)


def toolkit_facts(started):
    facts, child = started
    if child is None:
        return facts
    raw = child.collect()
    if "spawnError" in raw:
        facts["error"] = "could not run nvcc: " + raw["spawnError"]
    elif raw["timedOut"]:
        facts["error"] = "nvcc --version did not answer within %ds" % NVCC_TIMEOUT
    else:
        # The pattern cpp_extension._check_cuda_version reads the version with.
        match = re.search(r"release (\d+[.]\d+)", raw["stdout"])
        facts["release"] = match.group(1) if match else None
        if match is None:
            text = (raw["stdout"] + raw["stderr"]).strip()
            facts["error"] = "nvcc --version printed no release: " + (text.splitlines()[-1] if text else
                                                                       "exit %s" % raw["code"])
    return facts


def can_create_in(directory, as_directory):
    """Whether this process can create (and remove) an entry in `directory`, found by doing it:
    os.access answers yes for root almost everywhere (TRITON_CACHE_DIR=/proc/x was "writable",
    issue 28). The entry is a fresh name, created exclusively and removed at once."""
    name = os.path.join(directory, ".gpuprep-write-check-%d-%s" % (os.getpid(), os.urandom(6).hex()))
    try:
        if as_directory:
            os.mkdir(name, 0o700)
            os.rmdir(name)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            os.close(os.open(name, flags, 0o600))
            os.unlink(name)
        return True
    except OSError:
        return False


def writable_directory(path):
    """(exists, the directory checked, writable) for a cache directory: the directory itself when it
    exists (can a file be made in it?), else the nearest existing parent it would be created in
    (can a directory be made there?). A file in the way (TRITON_CACHE_DIR=/etc/passwd/x) can never
    hold a directory."""
    path = os.path.abspath(path)
    current = path
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            return False, None, None
        current = parent
    try:
        is_dir = stat.S_ISDIR(os.stat(current).st_mode)
    except OSError:  # a dangling link: makedirs fails on it
        is_dir = False
    if not is_dir:
        return False, current, False
    exists = current == path
    return exists, current, can_create_in(current, as_directory=not exists)


def temp_dir():
    """tempfile.gettempdir()'s answer: the first of TMPDIR, TEMP, TMP, /tmp, /var/tmp, /usr/tmp
    that is a directory this process can create a file in (tested by creating one, as
    tempfile does)."""
    candidates = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    candidates += ["/tmp", "/var/tmp", "/usr/tmp"]
    for candidate in candidates:
        if candidate and os.path.isdir(candidate) and can_create_in(candidate, as_directory=False):
            return os.path.abspath(candidate)
    return os.getcwd()


def inductor_default():
    """torch/_inductor/runtime/cache_dir_utils.py default_cache_dir() at
    pytorch/pytorch@9a48faad96189244a6ba6639c501f3da1d20aa79: <tempdir>/torchinductor_<user>."""
    import getpass
    try:
        user = getpass.getuser()
    except Exception:  # no LOGNAME/USER and no passwd entry for this UID (random-UID containers)
        return None, "no user name for uid %s: getpass.getuser() fails" % os.getuid()
    return os.path.join(temp_dir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)), None


def cache_dir_facts():
    home = os.path.expanduser("~")
    # triton/knobs.py cache_knobs: TRITON_CACHE_DIR, else $TRITON_HOME (default ~/)/.triton/cache
    # (triton-lang/triton@689edabdbe3b8f2707eb35a1d0ce336f69122ea9).
    triton_default = os.path.join(os.environ.get("TRITON_HOME") or home, ".triton", "cache"), None
    # CUDA_CACHE_PATH, else ~/.nv/ComputeCache on Linux (CUDA C++ Programming Guide, CUDA
    # Environment Variables).
    cuda_default = os.path.join(home, ".nv", "ComputeCache"), None
    entries = []
    for name, variable, default in (("triton", "TRITON_CACHE_DIR", lambda: triton_default),
                                    ("inductor", "TORCHINDUCTOR_CACHE_DIR", inductor_default),
                                    ("cuda-jit", "CUDA_CACHE_PATH", lambda: cuda_default)):
        value = os.environ.get(variable)
        path, error = (value, None) if value else default()
        entry = {"name": name, "variable": variable, "fromVariable": bool(value), "path": path,
                 "exists": False, "checked": None, "writable": None, "error": error}
        if path:
            entry["exists"], entry["checked"], entry["writable"] = writable_directory(path)
        entries.append(entry)
    return {"uid": os.getuid() if hasattr(os, "getuid") else None, "entries": entries}


# ---------------------------------------------------------------- JIT toolchain (Triton's ptxas, NVRTC)

# ptxas --version / --help answer in milliseconds; a wrapper that hangs must not hold the probe.
PTXAS_TIMEOUT = 5
# Triton's NVIDIA tools (triton/knobs.py env_nvidia_tool): the binary under backends/nvidia/bin
# and the variable that replaces it. `ptxas` serves every target in triton <= 3.5; 3.6 added
# `ptxas-blackwell` for arch >= 100 (backends/nvidia/compiler.py get_ptxas), and a release branch
# added `ptxas-thor` for arch 110 (triton-lang/triton#10462). Which split the installed Triton
# makes is read from its compiler.py, not assumed.
TRITON_TOOLS = (("ptxas", "TRITON_PTXAS_PATH"), ("ptxas-blackwell", "TRITON_PTXAS_BLACKWELL_PATH"),
                ("ptxas-thor", "TRITON_PTXAS_THOR_PATH"))
# Only the SASS targets (sm_XY, sm_XYa, sm_XYf): what Triton passes as --gpu-name.
GPU_NAMES = re.compile(r"'(sm_\d+[af]?)'")


def gpu_names_from_help(text):
    """The sm_ values of --gpu-name that `ptxas --help` lists ("Allowed values for this option: ...")."""
    at = text.find("--gpu-name")
    if at < 0:
        return None
    allowed = text.find("Allowed values", at)
    end = text.find("Default value", allowed)
    if allowed < 0:
        return None
    return GPU_NAMES.findall(text[allowed:end if end > 0 else len(text)])


def triton_facts(sys_path):
    """Where triton is and which of its ptxas binaries it picks by architecture, from its files."""
    _, package = find_package(sys_path, "triton")
    if package is None or not os.path.isdir(package):
        return None, []
    compiler = read_text(os.path.join(package, "backends", "nvidia", "compiler.py"), 1 << 20) or ""
    version = version_from_file(os.path.join(package, "__init__.py"), ["__version__"]).get("__version__")
    facts = {"location": package, "version": version,
             "blackwellPtxas": "ptxas_blackwell" in compiler, "thorPtxas": "ptxas_thor" in compiler}
    tools = []
    # backends/nvidia/bin since triton 3.0; third_party/cuda/bin before.
    for directory in (os.path.join(package, "backends", "nvidia", "bin"),
                      os.path.join(package, "third_party", "cuda", "bin")):
        for name, _ in TRITON_TOOLS:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                tools.append(("bundled", name, None, path))
    for name, variable in TRITON_TOOLS:
        value = os.environ.get(variable)
        if value:
            # Older tritons split the value on spaces and run the first word.
            tools.append(("env", name, variable, value.split(" ")[0]))
    return facts, tools


def start_jit_toolchain(sys_path, toolkit):
    """Every ptxas Triton (or a fix) could use, each asked --version and --help now; collected later."""
    triton, tools = triton_facts(sys_path)
    home = toolkit[0].get("home")
    if home:
        path = os.path.join(home, "bin", "ptxas")
        if os.path.isfile(path):
            tools.append(("toolkit", "ptxas", None, path))
    started = []
    for role, name, variable, path in tools:
        entry = {"name": name, "role": role, "variable": variable, "path": path,
                 "exists": os.path.isfile(path), "version": None, "gpuNames": None, "error": None}
        children = (Child([path, "--version"], PTXAS_TIMEOUT), Child([path, "--help"], PTXAS_TIMEOUT)) \
            if entry["exists"] else None
        started.append((entry, children))
    return triton, started, start_nvrtc(sys_path, home)


def ptxas_entry(entry, children):
    if children is None:
        entry["error"] = "no such file"
        return entry
    version, usage = (child.collect() for child in children)
    for raw in (version, usage):
        if "spawnError" in raw:
            entry["error"] = "could not run: " + raw["spawnError"]
            return entry
        if raw["timedOut"]:
            entry["error"] = "did not answer within %ds" % PTXAS_TIMEOUT
            return entry
    match = re.search(r"release (\d+\.\d+)", version["stdout"])
    entry["version"] = match.group(1) if match else None
    entry["gpuNames"] = gpu_names_from_help(usage["stdout"] + usage["stderr"])
    if entry["version"] is None:
        entry["error"] = "--version printed no release"
    return entry


# nvrtcGetSupportedArchs lists the SM numbers the NVRTC library compiles for; asked in a child
# (ctypes into a CUDA library) with -I so nothing from the working directory is imported.
NVRTC_QUERY = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
major, minor, count = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
lib.nvrtcGetNumSupportedArchs(ctypes.byref(count))
archs = (ctypes.c_int * max(count.value, 1))()
lib.nvrtcGetSupportedArchs(archs)
print(json.dumps({"version": "%d.%d" % (major.value, minor.value), "archs": list(archs)[:count.value]}))
"""


def nvrtc_libraries(sys_path, home):
    """libnvrtc.so files: the nvidia-* wheels' (what torch loads) first, then the toolkit's."""
    found = []
    for _, _, real in scan_entries(sys_path):
        nvidia = os.path.join(real, "nvidia")
        try:
            subdirs = sorted(os.listdir(nvidia))
        except OSError:
            continue
        for sub in subdirs:
            lib = os.path.join(nvidia, sub, "lib")
            try:
                names = sorted(n for n in os.listdir(lib) if re.match(r"^libnvrtc\.so\.\d+$", n))
            except OSError:
                continue
            found.extend(os.path.join(lib, n) for n in names)
    if home:
        lib = os.path.join(home, "lib64")
        try:
            found.extend(os.path.join(lib, n) for n in sorted(os.listdir(lib)) if re.match(r"^libnvrtc\.so\.\d+$", n))
        except OSError:
            pass
    return found[:4]


def start_nvrtc(sys_path, home):
    return [({"path": path, "version": None, "archs": None, "error": None},
             Child([sys.executable, "-I", "-c", NVRTC_QUERY, path], PTXAS_TIMEOUT))
            for path in nvrtc_libraries(sys_path, home)]


def nvrtc_entry(entry, child):
    raw = child.collect()
    if "spawnError" in raw:
        entry["error"] = "could not run: " + raw["spawnError"]
    elif raw["timedOut"]:
        entry["error"] = "did not answer within %ds" % PTXAS_TIMEOUT
    else:
        try:
            result = json.loads(raw["stdout"].strip().splitlines()[-1])
            entry["version"] = str(result["version"])
            entry["archs"] = ["sm_%d" % int(a) for a in result["archs"]]
        except (ValueError, IndexError, KeyError, TypeError):
            entry["error"] = "the query failed: " + tail(raw["stderr"].strip(), 200)
    return entry


def jit_toolchain_facts(started):
    triton, tools, nvrtc = started
    return {"triton": triton,
            "ptxas": [ptxas_entry(entry, children) for entry, children in tools],
            "nvrtc": [nvrtc_entry(entry, child) for entry, child in nvrtc]}


# ---------------------------------------------------------------- main


def parse_args(argv):
    options = {"fast": False, "timeout": 60.0, "extensions": [], "imports": [], "nonce": None,
               "gpu_health": False}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--fast":
            options["fast"] = True
        elif arg == "--gpu-health":
            options["gpu_health"] = True
        elif arg == "--child-timeout" and args:
            options["timeout"] = float(args.pop(0))
        elif arg == "--extensions" and args and re.match(r"^(\s*[\w.]+=[\w.,-]*)*\s*$", args[0]):
            # "MODULE=DIST,DIST MODULE=DIST ...": the known extensions (the KB's import-checks
            # table), each checked when present. One word, so `gpuprep -v` shows a short line.
            for entry in args.pop(0).split():
                module, dists = entry.split("=", 1)
                options["extensions"].append((module, [normalize(d) for d in dists.split(",") if d]))
        elif arg == "--import" and args:
            options["imports"].append(args.pop(0))
        elif arg == "--nonce" and args and re.match(r"^[0-9a-f]{8,64}$", args[0]):
            options["nonce"] = args.pop(0)
        else:
            sys.stderr.write("gpuprep probe: unknown argument %r\n" % arg)
            sys.exit(3)
    return options


def emit(document, nonce):
    """The frame when gpuprep named a nonce, else the bare JSON line (a person running probe.py)."""
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if nonce is not None:
        FRAME["emit"](nonce, "probe", document)
        return
    data = (json.dumps(document) + "\n").encode("utf-8")
    while data:
        data = data[os.write(1, data):]


def main():
    # The nonce first, before anything is imported or started (frame.py says why).
    nonce = FRAME["take_nonce"](globals())
    options = parse_args(sys.argv[1:])
    fast, timeout, nonce = options["fast"], options["timeout"], nonce or options["nonce"]
    nvidia_children = start_nvidia_smi()
    health_children = start_gpu_health() if options["gpu_health"] else None
    toolkit = start_toolkit()
    interpreter = interpreter_facts()
    sys_path = interpreter["sysPath"]
    torch_location, _ = find_package(sys_path, "torch")
    jit_toolchain = start_jit_toolchain(sys_path, toolkit)
    extensions = installed_extensions(sys_path, options["extensions"])
    # Modules the user asked to import-check (their own builds): checked even when not found,
    # so a typo or a missing build shows up as a failed import rather than silence.
    known = set(module for module, _, _ in extensions)
    for module in options["imports"]:
        if module not in known:
            extensions.append((module, find_package(sys_path, module)[0], []))

    # Start every risky child first and at once: the total is the slowest child, and the file
    # reading below overlaps with their imports.
    torch_child = None
    ext_children = []
    if not fast:
        if torch_location is not None:
            torch_child = torch_env_child({}, timeout)
        for module, _, _ in extensions:
            check = {"import": module, "torchFirst": torch_location is not None}
            ext_children.append(torch_env_child(check, timeout))

    dists = distributions(sys_path)
    host = host_facts(nvidia_children)
    if health_children is not None:
        host["gpuHealth"] = gpu_health_facts(health_children)
    python = {
        "interpreter": interpreter,
        "distributions": dists,
        "duplicates": duplicates(dists),
        "torch": torch_static(sys_path),
        "numpy": numpy_static(sys_path, dists),
        "env": env_facts(),
        "constraintFiles": constraint_files(),
        "cacheDirs": cache_dir_facts(),
    }

    if fast:
        live = skipped("--fast: torch not imported")
        live["result"] = None
    elif torch_child is None:
        live = skipped("torch is not installed in this environment")
        live["result"] = None
    else:
        live, payload = child_run(torch_child.collect())
        live["result"] = payload if live["status"] == "ok" else None
    python["torchLive"] = live
    python["toolkit"] = toolkit_facts(toolkit)
    python["jitToolchain"] = jit_toolchain_facts(jit_toolchain)

    python["extensions"] = []
    for index, (module, location, dist_names) in enumerate(extensions):
        if fast:
            run = skipped("--fast: extensions not imported")
            imported = None
        else:
            run, imported = child_run(ext_children[index].collect())
        dist = owning_distribution(dists, location, dist_names)
        version = (imported or {}).get("version") or (dist["version"] if dist else None)
        run.update(module=module, distribution=dist["name"] if dist else None, version=version)
        python["extensions"].append(run)

    python["probe"] = {"version": PROBE_VERSION, "mode": "fast" if fast else "full",
                       "durationMs": elapsed_ms(START)}
    emit({"host": host, "python": python}, nonce)


if __name__ == "__main__":
    main()
