# gpuprep torch-environment child: the one place that imports torch to report its environment,
# shared by the doctor probe (probe.py, torchLive in Facts) and validate (validate.py, its env
# and extension checks). Both payloads travel as one file, so the build inlines this file's text
# into each at its "@inline torch_env.py" marker (scripts/copy-assets.mjs) and they run it as
#
#     python -c "<this text>" '<options JSON>'
#
# options: {} for the torch environment (doctor), {"matmul": true} to also check a cuBLAS matmul
# (validate); {"import": MODULE, "torchFirst": bool} to import-check
# one extension in a process of its own (a segfault in it must not take the torch facts along).
# stdout: one line, RESULT_MARK + JSON; anything torch or an extension prints around it is noise.
# exit 0; 4 when torch or the module does not import (the JSON then holds "error").
# Any CPython >= 3.8; only the standard library at the top level.
# The current directory comes off sys.path before any import (src/transports/python-guard.ts).
import sys; sys.path[:] = [p for p in sys.path if p != ""]  # noqa: E702
import json
import time
import warnings

sys.dont_write_bytecode = True

RESULT_MARK = "@@GPUPREP_RESULT@@"
# Caps each warning: torch's arch warning (kept whole: rules quote it) lists every architecture; an
# extension may dump a page.
WARNING_LIMIT = 2000


def error_text(error):
    return "%s: %s" % (type(error).__name__, error)


def safe(function, default=None):
    """Older torch lacks some switches and probes: missing -> default, never a failed child."""
    try:
        return function()
    except Exception:
        return default


def nccl_version_text(version):
    """torch.cuda.nccl.version() as "major.minor.patch". torch >= 1.10 returns a tuple (a fourth
    item, the NCCL_SUFFIX string, since torch 2.1 when the suffix is not empty); older torch
    returns NCCL_VERSION_CODE, an int coded major*10000+minor*100+patch since NCCL 2.9 (21803)
    and major*1000+minor*100+patch before (2708)."""
    if isinstance(version, (tuple, list)):
        numbers = [str(int(part)) for part in version[:3]]
        suffix = "".join(str(part) for part in version[3:])
        if suffix and suffix[0].isalnum():
            suffix = "+" + suffix
        return ".".join(numbers) + suffix
    code = int(version)
    major, rest = divmod(code, 10000) if code >= 10000 else divmod(code, 1000)
    minor, patch = divmod(rest, 100)
    return "%d.%d.%d" % (major, minor, patch)


def arch_list(torch):
    """The code targets torch was built for. get_arch_list() answers [] while CUDA is unavailable
    (a driver problem, no GPU); the build flags it reads are there all the same."""
    names = safe(lambda: list(torch.cuda.get_arch_list()), [])
    if names:
        return names
    flags = safe(lambda: torch._C._cuda_getArchFlags())
    return flags.split() if flags else []


def sdpa_api(torch):
    """How this torch selects SDPA backends: torch.nn.attention (>= 2.3), the older
    torch.backends.cuda.sdp_kernel (2.0-2.2), or none (< 2.0: no SDPA at all)."""
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return "none"
    try:
        import torch.nn.attention as attention

        if hasattr(attention, "sdpa_kernel"):
            return "nn.attention"
    except ImportError:
        pass
    if hasattr(torch.backends.cuda, "sdp_kernel"):
        return "backends.cuda.sdp_kernel"
    return "none"


def sdpa_enabled(torch):
    """The SDPA backend switches, named as torch.nn.attention.SDPBackend names them (FLASH_ATTENTION,
    EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH) and as validate's SDPA benchmark reports them."""
    backends = torch.backends.cuda
    return {
        "flash": safe(lambda: bool(backends.flash_sdp_enabled())),
        "efficient": safe(lambda: bool(backends.mem_efficient_sdp_enabled())),
        "cudnn": safe(lambda: bool(backends.cudnn_sdp_enabled())),
        "math": safe(lambda: bool(backends.math_sdp_enabled())),
    }


def kernel_check(torch, matmul):
    """An elementwise kernel on device 0, checked against the CPU, and with `matmul` a 512x512
    matmul (cuBLAS) too: validate asks for it; doctor's probe does not, since creating the cuBLAS
    handle adds to every doctor run's time over `import torch` (issue 17) and validate covers it.
    ran: the GPU work was attempted (a launch that fails says ran, not ok, and why)."""
    check = {"ran": True, "ok": False, "relError": None, "error": None}
    try:
        generator = torch.Generator().manual_seed(0)
        a = torch.randn(512, 512, generator=generator)
        b = torch.randn(512, 512, generator=generator)
        elementwise = (a.to("cuda:0") * 2 + 1).cpu()
        if not bool(torch.allclose(elementwise, a * 2 + 1)):
            check["error"] = "elementwise kernel: GPU result differs from the CPU's"
            return check
        if not matmul:
            check["ok"] = True
            return check
        reference = a.double() @ b.double()
        got = (a.to("cuda:0") @ b.to("cuda:0")).double().cpu()
        torch.cuda.synchronize(0)
        check["relError"] = float((got - reference).norm() / reference.norm())
        # 1e-2 leaves room for TF32, which some containers switch on by default.
        check["ok"] = check["relError"] < 1e-2
        if not check["ok"]:
            check["error"] = "512x512 matmul: relative error %.3g vs float64" % check["relError"]
    except Exception as error:
        check["error"] = error_text(error)
    return check


def numpy_check(torch):
    try:
        import numpy
    except Exception as error:
        return {"version": None, "roundTrip": None, "error": error_text(error)}
    version = str(getattr(numpy, "__version__", "")) or None
    try:
        tensor = torch.arange(16, dtype=torch.float32) + 0.5
        back = torch.from_numpy(tensor.numpy() * 2)
        ok = bool(torch.equal(back, tensor * 2))
        return {"version": version, "roundTrip": ok, "error": None if ok else "values changed"}
    except Exception as error:
        return {"version": version, "roundTrip": False, "error": error_text(error)}


def device_facts(torch, index):
    props = torch.cuda.get_device_properties(index)
    return {"index": index, "name": props.name, "capability": [props.major, props.minor],
            "totalMemoryBytes": int(props.total_memory),
            "multiProcessorCount": getattr(props, "multi_processor_count", None),
            "l2CacheBytes": getattr(props, "L2_cache_size", None)}


def torch_facts(torch, matmul=False):
    r = {"version": str(torch.__version__), "file": str(torch.__file__), "cudaBuilt": torch.version.cuda,
         "cudaAvailable": False, "cudaInitError": None, "deviceCount": 0, "devices": []}
    try:
        r["cudaAvailable"] = bool(torch.cuda.is_available())
        # is_available() only says False; init() raises the reason (no driver, driver too old, ...).
        if r["cudaAvailable"] or r["cudaBuilt"]:
            torch.cuda.init()
            r["deviceCount"] = torch.cuda.device_count()
    except Exception as error:
        r["cudaAvailable"] = False
        r["cudaInitError"] = error_text(error)
    for index in range(r["deviceCount"]):
        r["devices"].append(device_facts(torch, index))
    r["archList"] = arch_list(torch)
    r["cudnnVersion"] = safe(lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    r["ncclVersion"] = safe(lambda: nccl_version_text(torch.cuda.nccl.version())) if r["cudaBuilt"] else None
    r["sdpa"] = sdpa_enabled(torch)
    r["sdpaApi"] = sdpa_api(torch)
    r["tf32"] = {"matmul": safe(lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
                 "cudnn": safe(lambda: bool(torch.backends.cudnn.allow_tf32))}
    r["float32MatmulPrecision"] = safe(lambda: torch.get_float32_matmul_precision())
    if r["deviceCount"] > 0:
        r["kernel"] = kernel_check(torch, matmul)
    else:
        r["kernel"] = {"ran": False, "ok": False, "relError": None, "error": None}
    r["numpy"] = numpy_check(torch)
    return r


def torch_environment(matmul=False):
    """(result, exit code): the torch facts, or {"error"} when torch does not import. Warnings
    torch gives on import and CUDA init ("sm_120 is not compatible ...") are kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.monotonic()
        try:
            import torch
        except BaseException as error:  # an import may sys.exit() or raise anything
            result, code = {"error": error_text(error)}, 4
        else:
            imported = round(time.monotonic() - started, 3)
            result, code = torch_facts(torch, matmul), 0
            result["importSeconds"] = imported
    result["warnings"] = sorted(set(str(w.message).strip()[:WARNING_LIMIT] for w in caught))
    return result, code


def import_check(module, torch_first):
    """(result, exit code) of importing one extension module, as a project would."""
    import importlib

    if torch_first:
        # As in real use: torch extensions are imported after torch, whose libraries (libc10.so ...)
        # they link against without an rpath. A torch that fails to import is the env check's finding.
        try:
            importlib.import_module("torch")
        except BaseException:
            pass
    try:
        imported = importlib.import_module(module)
    except BaseException as error:
        return {"error": error_text(error)}, 4
    version = getattr(imported, "__version__", None)
    return {"version": None if version is None else str(version)}, 0


def report(result):
    """The result on its own line after a newline, so a half line printed before cannot hide it."""
    sys.stdout.write("\n" + RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()


def main(argv):
    options = json.loads(argv[1]) if len(argv) > 1 else {}
    if options.get("import"):
        result, code = import_check(options["import"], bool(options.get("torchFirst")))
    else:
        result, code = torch_environment(bool(options.get("matmul")))
    report(result)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
