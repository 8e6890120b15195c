#!/bin/sh
# The accuracy benchmark of `gpuprep memory` (bench/memory/accuracy.py) on a GPU machine.
# Writes memory-accuracy-h100.jsonl, its summary and per-cell logs into $OUT (default ./out).
# Run from the repository root (or a copy holding bench/ and src/memory/memory.py).
# Knobs: WORKERS (cells at once, default 3), BUDGET (seconds after which no new cell starts, 320).
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c 'import torch, transformers, accelerate; print("torch", torch.__version__, "transformers", transformers.__version__, "accelerate", accelerate.__version__)' | tee -a "$OUT/gpu.txt"
python3 "$ROOT/bench/memory/accuracy.py" run --out "$OUT/memory-accuracy-h100.jsonl" \
  --summary "$OUT/memory-accuracy-h100.summary.json" --workers "${WORKERS:-3}" --budget "${BUDGET:-320}" \
  --cell-timeout 110 2>&1 | tee "$OUT/log.txt" | grep -v '^ \|^{\|^}'
# One archive for the per-cell logs (each cell's stderr), so few files come back.
(cd "$OUT" && tar czf cell-logs.tgz ./*.log && rm -f ./*.log)
