#!/usr/bin/env bash
# Captures `gpuprep doctor --save` snapshots on the H100 machine, healthy and in broken states
# built there for real, for test/fixtures/facts (test/doctor/rules-on-captures.test.ts).
# Runs in the repo root with dist/ and node_modules carried and node on PATH; writes one tarball
# to $OUT. Changes nothing outside a temp dir: broken states come from env vars and PYTHONPATH.
# Usage: OUT=/some/dir bash bench/device/capture-doctor-states.sh   (PY=... to pick the python)
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
ROOT=$(pwd)
PY=${PY:-/opt/torch/.venv/bin/python3} # torch 2.11.0+cu130 on the device
WORK=$(mktemp -d /tmp/gpuprep-states.XXXXXX)
CAPS=$WORK/captures
mkdir -p "$CAPS" "$WORK/no-project"
LOG=$CAPS/capture-log.txt

# One capture: NAME [env assignments...] -- doctor flags. Records the command, exit code and time.
capture() {
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local start
  start=$(date +%s.%N)
  (cd "$WORK/no-project" && env "${envs[@]}" node "$ROOT/dist/src/cli/main.js" doctor "$@" \
    --save "$CAPS/$name.json" >"$CAPS/$name.report.txt" 2>&1)
  local code=$?
  echo "$name: env ${envs[*]} gpuprep doctor $* --save $name.json -> exit $code in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s" >>"$LOG"
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >"$LOG"
echo "python: $PY $("$PY" -c 'import torch, numpy; print(torch.__version__, numpy.__version__)')" >>"$LOG"

capture h100-healthy -- --python "$PY" --project "$WORK/no-project"
capture h100-fast -- --python "$PY" --project "$WORK/no-project" --fast
capture h100-cuda-visible-devices-empty CUDA_VISIBLE_DEVICES= -- --python "$PY" --project "$WORK/no-project"
capture h100-cuda-visible-devices-invalid CUDA_VISIBLE_DEVICES=1 -- --python "$PY" --project "$WORK/no-project"
capture h100-alloc-conf-invalid PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True -- --python "$PY" --project "$WORK/no-project"

# An extension compiled with nvcc for sm_80 only, importable as "xformers" through PYTHONPATH.
bash "$ROOT/test/fixtures/builders/sm80-extension/build.sh" "$PY" "$WORK/sm80-src" >>"$LOG" 2>&1
"$PY" -m pip install -q --no-build-isolation --no-deps --target "$WORK/sm80-site" "$WORK/sm80-src" >>"$LOG" 2>&1
capture h100-extension-sm80-only PYTHONPATH="$WORK/sm80-site" -- --python "$PY" --project "$WORK/no-project"

# Two real import failures, checked with --import-check: a torch extension built with the other
# C++ string ABI (undefined symbol) and a module compiled against NumPy 1.x headers under NumPy 2.
"$PY" "$ROOT/test/fixtures/builders/abi-extension/build.py" "$WORK/exts" >>"$LOG" 2>&1
bash "$ROOT/test/fixtures/builders/numpy1-module/build.sh" "$PY" "$ROOT/.device-extra/numpy1-include" "$WORK/exts" >>"$LOG" 2>&1
capture h100-extensions-abi-numpy1 PYTHONPATH="$WORK/exts" -- --python "$PY" --project "$WORK/no-project" \
  --import-check abi_ext --import-check np1_module

# torch installed twice: a second, complete copy of the same torch earlier on sys.path.
SITE=$("$PY" -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
mkdir -p "$WORK/torch-copy"
cp -r "$SITE/torch" "$SITE"/torch-*.dist-info "$WORK/torch-copy/"
capture h100-torch-installed-twice PYTHONPATH="$WORK/torch-copy" -- --python "$PY" --project "$WORK/no-project"
rm -rf "$WORK/torch-copy"

# A project pinning an older torch: pip install -r / uv sync would replace torch 2.11.0.
mkdir -p "$WORK/project"
printf '[project]\nname = "trainer"\nversion = "0.1.0"\ndependencies = ["torch==2.5.1"]\n' >"$WORK/project/pyproject.toml"
capture h100-project-pins-torch-2.5.1 -- --python "$PY" --project "$WORK/project"

# Timings beside collect_env are bench/doctor-bench.sh's job; run it in the same session.

tar -C "$WORK" -czf "$OUT/doctor-captures.tar.gz" captures
cat "$LOG"
rm -rf "$WORK"
