#!/usr/bin/env bash
# Issue 24 on a GPU machine in one device call (run from a copy holding bench/, src/memory/memory.py and
# dist/ with its production node_modules and package.json):
#   1. `gpuprep memory --measure --batch 1..64` on a ~400M model (Pythia-410M's shape, bf16 autocast,
#      AdamW, an eval step; 1,024 tokens on a card under 100 GB, 2,048 above, so the answer is inside
#      1..64), then right after on the same GPU bench/memory/hand-bisect.py (plain bisection by hand, the same
#      trial, 5 % margin and 20-step confirmation): wall time, trials, answer;
#   2. cells run for real with their allocation history and their traced order (bench/memory/lanes.py:
#      the cells of SETS, default fit,holdout, or of those only the models or cell ids HISTORY names),
#      and beside them the trace alone of every cell of TRACES (default fit,holdout; "none": no such
#      lane), each saving its allocation order: the allocator model is studied on these offline.
# Each part has its own time limit. Writes into $OUT: gpu.txt, measure.json, measure.html, bisect.json,
# records.jsonl, traces.jsonl, events.tgz (the orders, the real histories, every log), log.txt.
# Env: NODE (default node), MEASURE_S (140), BISECT_S (170), LANES_S (150), SETS, HISTORY, TRACES.
set -u
OUT=${OUT:-$PWD/out}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NODE=${NODE:-node}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
began=$(date +%s)
exec > >(tee "$OUT/log.txt") 2>&1

. "$ROOT/bench/device/memory-common.sh"
record_machine "$OUT/gpu.txt"

mkdir -p /tmp/p410
python3 -c "import json,sys; sys.path.insert(0,'$ROOT/bench/memory'); import accuracy; json.dump(accuracy.configs(False)['pythia-410m'], open('/tmp/p410/config.json','w'))"
total_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
SEQ=1024
[ "$total_mib" -gt 100000 ] && SEQ=2048
echo "measured search: Pythia-410M shape, seq $SEQ, card $total_mib MiB"
start=$(date +%s.%N)
limited "${MEASURE_S:-140}" "$NODE" "$ROOT/dist/src/cli/main.js" memory --model /tmp/p410/config.json --amp bf16 \
  --seq-len "$SEQ" --batch 1..64 --eval --measure --json --html "$OUT/measure.html" > "$OUT/measure.json" 2> "$LOGS/measure.err"
echo "gpuprep --measure: exit $? in $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
python3 - "$OUT/measure.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as error:
    sys.exit("no report: %s" % error)
print("estimate maxBatch", r["verdict"]["maxBatch"], "measured", r["measuredMaxBatch"])
for t in r["trials"]:
    print("  trial b=%s %s alloc %.2f GiB reserved %.2f GiB" % (t["batch"], t["status"], (t["peakAllocatedBytes"] or 0) / 2**30, (t["peakReservedBytes"] or 0) / 2**30))
for n in r["notes"]:
    print("  note:", n)
PY
start=$(date +%s.%N)
limited "${BISECT_S:-170}" python3 "$ROOT/bench/memory/hand-bisect.py" /tmp/p410/config.json --batch 1..64 --seq-len "$SEQ" \
  --amp bf16 --margin 0.05 --out "$OUT/bisect.json" 2> "$LOGS/bisect.log"
echo "bisect by hand: exit $? in $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
cat "$LOGS/bisect.log"

# Real runs with their history (alone on the GPU, one at a time) and, beside them, traces alone.
limited "${LANES_S:-150}" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-fit,holdout}" ${HISTORY:+--only "$HISTORY"} \
  --out /tmp/hist --trace-workers 6 --budget $(( ${LANES_S:-150} - 40 )) --trace-timeout 120 --truth-timeout 60 \
  2> "$LOGS/hist.log" &
H=$!
if [ "${TRACES:-fit,holdout}" != none ]; then
  limited "${LANES_S:-150}" python3 "$ROOT/bench/memory/lanes.py" run --sets "${TRACES:-fit,holdout}" --traces-only \
    --out /tmp/traces --trace-workers 8 --budget $(( ${LANES_S:-150} - 40 )) --trace-timeout 110 2> "$LOGS/traces.log"
  echo "traces: exit $? at $(( $(date +%s) - began )) s"
fi
wait "$H"
echo "history lanes: done at $(( $(date +%s) - began )) s"
for d in hist traces; do
  if [ -f /tmp/$d/records.jsonl ]; then cp /tmp/$d/records.jsonl "$LOGS/$d.jsonl"; else cp /tmp/$d/records.partial.jsonl "$LOGS/$d.jsonl" 2> /dev/null; fi
  cp /tmp/$d/work/*.log "$LOGS/" 2> /dev/null
done
cp "$LOGS/hist.jsonl" "$OUT/records.jsonl" 2> /dev/null
cp "$LOGS/traces.jsonl" "$OUT/traces.jsonl" 2> /dev/null
grep -h "^truth\|^lanes" "$LOGS/hist.log" 2> /dev/null
tar -C / -czf "$OUT/events.tgz" tmp/hist/events $( [ -d /tmp/traces/events ] && echo tmp/traces/events ) "${LOGS#/}" 2> /dev/null
ls -la "$OUT"
echo "all: $(( $(date +%s) - began )) s"
