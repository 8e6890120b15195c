#!/usr/bin/env bash
# Issue 27 on the H100 device machine, in one call: the JIT calibration (libjitcal built with nvcc
# there, PTX only and SASS, called as is / CUDA_DISABLE_PTX_JIT=1 / CUDA_FORCE_PTX_JIT=1), the full
# validate run with kernel provenance, the JIT check (both builds as --jit-smoke), the feature
# matrix and the MFU of a 134M llama config; the MFU of a 374M config; and a quick SDPA run with
# the fused backends switched off in every Python process (the default call's math fallback).
# Run from a directory with dist/, node_modules/, package.json and bench/ (node on PATH):
#   bash bench/device/validate-issue27.sh
# Writes to $OUT (8 files): validate-h100.{json,html,xml,txt}, validate-mfu-374m-h100.json,
# validate-sdpa-math-h100.json, jit-calibration-h100.txt, run-log.txt
set -u
OUT=${OUT:-/tmp/validate-out}
mkdir -p "$OUT"
LOG="$OUT/run-log.txt"
CLI="node dist/src/cli/main.js validate"
export PYTHONUNBUFFERED=1
{
  echo "== $(date -u +%FT%TZ) $(uname -m) node $(node --version 2>&1) python3 $(command -v python3)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
} >"$LOG" 2>&1
step() { echo "== $(date -u +%T) $*" >>"$LOG"; }

BUILD=$(mktemp -d)
step "jit calibration: build + probe"
{
  bash bench/device/jit-calibration/build.sh "$BUILD"
  echo
  python3 bench/device/jit-calibration/probe.py "$BUILD"
} >"$OUT/jit-calibration-h100.txt" 2>&1

step "validate, full, --model llama-134m, JIT smokes of both builds"
start=$(date +%s)
PYTHONPATH="$BUILD" $CLI --model bench/device/models/llama-134m.json \
  --jit-smoke jitcal_ptx:smoke --jit-smoke jitcal_sass:smoke \
  --json --html "$OUT/validate-h100.html" --junit "$OUT/validate-h100.xml" >"$OUT/validate-h100.json" 2>>"$LOG"
echo "validate exit code $?, $(($(date +%s) - start)) s" | tee -a "$LOG"
NO_COLOR=1 $CLI --from "$OUT/validate-h100.json" >"$OUT/validate-h100.txt" 2>>"$LOG"

step "validate --only mfu --model llama-374m"
start=$(date +%s)
$CLI --only mfu --model bench/device/models/llama-374m.json --json >"$OUT/validate-mfu-374m-h100.json" 2>>"$LOG"
echo "mfu 374m exit code $?, $(($(date +%s) - start)) s" | tee -a "$LOG"

step "validate --only sdpa,kernels --quick with flash, efficient and cuDNN SDPA switched off"
MATH=$(mktemp -d)
cat >"$MATH/sitecustomize.py" <<'PY'
# Every Python process of this run starts with the fused SDPA backends off, as a project that
# calls torch.backends.cuda.enable_*_sdp(False) at import would have them.
try:
    import torch

    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    torch.backends.cuda.enable_cudnn_sdp(False)
except Exception:
    pass
PY
PYTHONPATH="$MATH" $CLI --only sdpa,kernels --quick --json >"$OUT/validate-sdpa-math-h100.json" 2>>"$LOG"
echo "sdpa-math exit code $?" | tee -a "$LOG"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
cat "$OUT/validate-h100.txt"
