#!/usr/bin/env bash
# Issue 24 on a GPU machine in one device call (run from the repository root, or from a copy holding
# bench/, src/memory/memory.py and, for the measured search, dist/ with its production node_modules):
#   1. the held-out accuracy cells (bench/memory/accuracy.py "holdout": families in no fit cell) through
#      bench/memory/lanes.py: traces in parallel, each real run alone on the GPU in a fresh process;
#   2. `gpuprep memory --measure --batch 1..64` on a ~400M model (Pythia-410M's shape, bf16 autocast,
#      AdamW, an eval step) and, right after on the same GPU, bench/memory/hand-bisect.py (plain bisection
#      by hand, same trial, same 5 % margin, same 20-step confirmation): time, trials, answer.
# Each part has its own time limit, so the call always ends with what it measured in $OUT:
#   gpu.txt, records.jsonl, summary.json, measure.json, measure.html, bisect.json, logs.tgz
# Env: ONLY (models to run, comma-separated), LANES_S (default 290), MEASURE_S (130), BISECT_S (130), NODE (a node binary; default `node`).
set -u
OUT=${OUT:-$PWD/out}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NODE=${NODE:-node}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
began=$(date +%s)

. "$ROOT/bench/device/memory-common.sh"
record_machine "$OUT/gpu.txt"

limited "${LANES_S:-290}" python3 "$ROOT/bench/memory/lanes.py" run --sets holdout ${ONLY:+--only "$ONLY"} --out /tmp/lanes2 \
  --trace-workers 12 --budget $(( ${LANES_S:-290} - 70 )) --trace-timeout 120 --truth-timeout 60 2> "$LOGS/lanes.log"
echo "lanes: exit $? at $(( $(date +%s) - began )) s"
if [ -f /tmp/lanes2/records.jsonl ]; then
  cp /tmp/lanes2/records.jsonl /tmp/lanes2/summary.json "$OUT/"
else
  cp /tmp/lanes2/records.partial.jsonl "$OUT/records.jsonl"
fi
cp /tmp/lanes2/work/*.log "$LOGS/" 2> /dev/null

# The measured search: the card's size sets the sequence, so 1..64 has its answer inside the range.
mkdir -p /tmp/p410
python3 -c "import json,sys; sys.path.insert(0,'$ROOT/bench/memory'); import accuracy; json.dump(accuracy.configs(False)['pythia-410m'], open('/tmp/p410/config.json','w'))"
total_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
SEQ=1024
[ "$total_mib" -gt 100000 ] && SEQ=2048
echo "measured search: Pythia-410M shape, seq $SEQ, card $total_mib MiB"
start=$(date +%s)
limited "${MEASURE_S:-130}" "$NODE" "$ROOT/dist/src/cli/main.js" memory --model /tmp/p410/config.json --amp bf16 \
  --seq-len "$SEQ" --batch 1..64 --eval --measure --json --html "$OUT/measure.html" > "$OUT/measure.json" 2> "$LOGS/measure.err"
echo "gpuprep --measure: exit $? in $(( $(date +%s) - start )) s"
start=$(date +%s)
limited "${BISECT_S:-130}" python3 "$ROOT/bench/memory/hand-bisect.py" /tmp/p410/config.json --batch 1..64 --seq-len "$SEQ" \
  --amp bf16 --margin 0.05 --out "$OUT/bisect.json" 2> "$LOGS/bisect.log"
echo "bisect by hand: exit $? in $(( $(date +%s) - start )) s"
tail -12 "$LOGS/bisect.log"
tar -C "$LOGS" -czf "$OUT/logs.tgz" .
echo "all: $(( $(date +%s) - began )) s"
