"""The JIT calibration's raw facts: each build of libjitcal (PTX only, SASS) called once in a
fresh process as is, with CUDA_DISABLE_PTX_JIT=1 and with CUDA_FORCE_PTX_JIT=1, all with
CUDA_CACHE_DISABLE=1 (no JIT cache). Prints ok / the CUDA error and the first call's time.

usage: python3 probe.py BUILD_DIR   (the directory build.sh wrote)
"""
import json
import os
import subprocess
import sys

CALL = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
started = time.perf_counter()
import jitcal_%s as module
try:
    module.smoke()
    print(json.dumps({"ok": True, "ms": (time.perf_counter() - started) * 1000}))
except Exception as exc:
    print(json.dumps({"ok": False, "ms": (time.perf_counter() - started) * 1000, "error": str(exc)}))
"""

ENVS = [("as is", {}), ("CUDA_DISABLE_PTX_JIT=1", {"CUDA_DISABLE_PTX_JIT": "1"}),
        ("CUDA_FORCE_PTX_JIT=1", {"CUDA_FORCE_PTX_JIT": "1"})]


def main(build):
    print("%-6s %-24s %-4s %10s  %s" % ("build", "environment", "ok", "first ms", "error"))
    for variant in ("ptx", "sass"):
        for label, extra in ENVS:
            env = dict(os.environ, CUDA_CACHE_DISABLE="1", **extra)
            for key in ("CUDA_DISABLE_PTX_JIT", "CUDA_FORCE_PTX_JIT"):
                if key not in extra:
                    env.pop(key, None)
            run = subprocess.run([sys.executable, "-c", CALL % variant, build], env=env,
                                 capture_output=True, text=True, timeout=120)
            lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
            result = json.loads(lines[-1]) if lines else {"ok": False, "ms": 0, "error": run.stderr.strip()[-300:]}
            print("%-6s %-24s %-4s %10.1f  %s" % (variant, label, "yes" if result["ok"] else "no",
                                                  result["ms"], result.get("error", "")))


if __name__ == "__main__":
    main(sys.argv[1])
