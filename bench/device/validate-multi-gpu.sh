#!/usr/bin/env bash
# NCCL all-reduce bus bandwidth through gpuprep validate on a machine with 2+ GPUs (nvidia-h200-x2
# or larger). Same setup as validate-h100.sh (node on PATH, dist/ and node_modules carried).
# Writes $OUT/validate-nccl.json, $OUT/validate-nccl.txt and $OUT/nccl-log.txt.
set -u
# NVLink multicast (NVLS) off, as the measured run had it: on shared hosts a program using it can
# take the GPUs out of service. Set them to 1 yourself to measure NVLS all-reduce.
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1} \
  NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
OUT=${OUT:-/tmp/validate-out}
mkdir -p "$OUT"
nvidia-smi topo -m >"$OUT/nccl-log.txt" 2>&1
start=$(date +%s)
node dist/src/cli/main.js validate --only nccl --json >"$OUT/validate-nccl.json" 2>>"$OUT/nccl-log.txt"
echo "validate exit code $?, $(($(date +%s) - start)) s" | tee -a "$OUT/nccl-log.txt"
NO_COLOR=1 node dist/src/cli/main.js validate --from "$OUT/validate-nccl.json" | tee "$OUT/validate-nccl.txt"
