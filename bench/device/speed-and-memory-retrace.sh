#!/usr/bin/env bash
# One device call for issues 13 and 17 (2026-11-26), in this order so the timed parts run alone:
#   1. the memory trace tier again on the committed H100 run's 35 cells (bench/memory/accuracy.py
#      retrace: the truth, accelerate's figure and seed 001's rule of each cell are kept), and
#      saved-for-backward tensors real vs fake for a 2-layer Llama (bench/memory/saved-tensors.py);
#   2. scan beside cuobjdump (bench/device/scan-bench.sh);
#   3. doctor beside the floor and on a torch-less venv (bench/doctor-bench.sh).
# Run from the repo root with node, dist/ and production node_modules present. $OUT gets 7 files.
set -u
OUT=${OUT:-$PWD/out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  node --version
} > "$WORK/machine.txt" 2>&1

python3 bench/memory/accuracy.py retrace docs/reports/memory-accuracy-h100.jsonl \
  --out "$OUT/memory-retrace-h100.jsonl" --summary "$OUT/memory-retrace-h100.summary.json" \
  --workers "${WORKERS:-8}" --cell-timeout 150 > "$WORK/memory-retrace.log" 2>&1
python3 bench/memory/saved-tensors.py --model llama --layers 2 --batch 4 --seq-len 1024 > "$OUT/saved-tensors-llama-h100.txt" 2>&1

OUT="$WORK/scan" bash bench/device/scan-bench.sh > /dev/null 2>&1
cp "$WORK/scan/scan-bench.txt" "$OUT/scan-bench-h100.txt"

CASES="floor doctor_full doctor_fast doctor_notorch" RUNS="${RUNS:-5}" OUT="$WORK/doctor" bash bench/doctor-bench.sh > /dev/null 2>&1
cp "$WORK/doctor/doctor-bench-summary.tsv" "$OUT/doctor-bench-summary-h100.tsv"
cp "$WORK/doctor/doctor-bench.tsv" "$OUT/doctor-bench-h100.tsv"
rm -rf "$WORK/doctor/notorch-venv"
tar -C "$WORK" -czf "$OUT/logs.tgz" .
cat "$OUT/scan-bench-h100.txt" "$OUT/doctor-bench-summary-h100.tsv"
# Per cell: the earlier trace figure and the new one against the measured peak.
python3 - "$OUT/memory-retrace-h100.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    truth = (r.get("truth") or {}).get("peakAllocatedBytes")
    new, old = (r.get("trace") or {}).get("peakAllocatedBytes"), (r.get("previousTrace") or {}).get("peakAllocatedBytes")
    if not truth or not new or not old:
        print(r.get("model"), r.get("batch"), "no figure", r.get("traceError"))
        continue
    print("%-12s %-14s b=%-4s %-7s before %+6.2f%%  now %+6.2f%%" % (r["model"], r.get("task"), r["batch"], r.get("split"),
          (old - truth) * 100.0 / truth, (new - truth) * 100.0 / truth))
PY
python3 bench/memory/accuracy.py summary "$OUT/memory-retrace-h100.jsonl" | head -60
