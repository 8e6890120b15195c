#!/usr/bin/env bash
# NCCL all-reduce bus bandwidth through gpuprep validate on a machine with 2+ GPUs (nvidia-h200-x2
# or larger). Same setup as validate-h100.sh (node on PATH, dist/ and node_modules carried).
# Writes $OUT/validate-nccl.json, $OUT/validate-nccl.txt and $OUT/nccl-log.txt.
set -u
OUT=${OUT:-/tmp/validate-out}
mkdir -p "$OUT"
nvidia-smi topo -m >"$OUT/nccl-log.txt" 2>&1
start=$(date +%s)
node dist/src/cli/main.js validate --only nccl --json >"$OUT/validate-nccl.json" 2>>"$OUT/nccl-log.txt"
echo "validate exit code $?, $(($(date +%s) - start)) s" | tee -a "$OUT/nccl-log.txt"
NO_COLOR=1 node dist/src/cli/main.js validate --from "$OUT/validate-nccl.json" | tee "$OUT/validate-nccl.txt"
