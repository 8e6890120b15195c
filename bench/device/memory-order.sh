#!/usr/bin/env bash
# Issue 24, the replay order's cuBLAS workspaces (each thread's first matmul) on the device, in one
# call (run from a copy holding bench/ and src/memory/): bench/memory/lanes.py traces each cell
# (memory.py as it is: kernels' own memory measured, events saved) and runs each cell's real run
# ALONE among real runs (3 steps + an eval step, max_memory_reserved, the process's nvidia-smi use,
# its allocator history). The before order (every workspace before the first step) is the same
# traced events replayed offline: bench/memory/order-table.py.
# Writes into $OUT: gpu.txt, records.jsonl, table.md, logs.tgz, events.tgz, log.txt.
# Env: SETS (holdout3,holdout2), ONLY (cells or models), LOOKED (models reported apart), LANES_S (330), WORKERS (8).
set -u
OUT=${OUT:-$PWD/out}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
began=$(date +%s)
exec > >(tee "$OUT/log.txt") 2>&1
. "$ROOT/bench/device/memory-common.sh"
record_machine "$OUT/gpu.txt"
LANES_S=${LANES_S:-330}
ONLY_ARG=${ONLY:+--only $ONLY}
# The whole process group ends at the limit; records written so far are kept.
limited "$LANES_S" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-holdout3,holdout2}" $ONLY_ARG --out /tmp/lanes \
  --trace-workers "${WORKERS:-8}" --budget $((LANES_S - 60)) --trace-timeout 200 --truth-timeout 60 2> "$LOGS/lanes.log"
echo "lanes: exit $? at $(( $(date +%s) - began )) s"
if [ -f /tmp/lanes/records.jsonl ]; then cp /tmp/lanes/records.jsonl "$OUT/records.jsonl"; else cp /tmp/lanes/records.partial.jsonl "$OUT/records.jsonl" 2> /dev/null; fi
mkdir -p "$LOGS/work" && cp /tmp/lanes/work/*.log "$LOGS/work/" 2> /dev/null
grep -h "^truth\|^trace\|^lanes" "$LOGS/lanes.log" 2> /dev/null
python3 "$ROOT/bench/memory/order-table.py" "$OUT/records.jsonl" /tmp/lanes/events "${LOOKED:-}" > "$OUT/table.md" 2>&1
cat "$OUT/table.md"
tar -C "$LOGS" -czf "$OUT/logs.tgz" . 2> /dev/null
(cd /tmp && tar -czf "$OUT/events.tgz" lanes/events 2> /dev/null)
echo "all: $(( $(date +%s) - began )) s"
