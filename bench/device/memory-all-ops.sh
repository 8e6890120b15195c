#!/usr/bin/env bash
# Issue 24, every op's own memory measured during the trace (not a fixed list), before/after in one
# device call (run from a copy holding bench/ and src/memory/): two trace lanes side by side on one GPU,
#   after   bench/memory/lanes.py: the trace tier of each cell with EVERY op's distinct calls run once for
#           real on the GPU (memory.py kernelOps "all", its default), and each cell's real run, ALONE
#           among real runs (3 steps + an eval step, the process's nvidia-smi use);
#   before  the same traces with LANES_KERNEL_OPS=listed (memory.py kernelOps "listed": only the ops of
#           KERNEL_OPS measured, the trace tier as main had it), traces only, against the same real run.
# Traces take little GPU memory beside a real run; each process's use is its own.
# Writes into $OUT: gpu.txt, after.jsonl, before.jsonl, table.md, cost.txt, logs.tgz, log.txt.
# Env: SETS (holdout4,holdout3), ONLY (cells or models), LOOKED (models reported apart), LANES_S (400), WORKERS (5).
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
LANES_S=${LANES_S:-400}
WORKERS=${WORKERS:-5}
ONLY_ARG=${ONLY:+--only $ONLY}
limited "$LANES_S" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-holdout4,holdout3}" $ONLY_ARG --out /tmp/after \
  --trace-workers "$WORKERS" --budget $((LANES_S - 60)) --trace-timeout 200 --truth-timeout 60 2> "$LOGS/after.log" &
A=$!
LANES_KERNEL_OPS=listed limited "$LANES_S" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-holdout4,holdout3}" $ONLY_ARG \
  --traces-only --out /tmp/before --trace-workers "$WORKERS" --budget $((LANES_S - 60)) --trace-timeout 200 2> "$LOGS/before.log" &
B=$!
wait "$A"; echo "after lanes: exit $? at $(( $(date +%s) - began )) s"
wait "$B"; echo "before lanes: exit $? at $(( $(date +%s) - began )) s"
for d in after before; do
  if [ -f /tmp/$d/records.jsonl ]; then cp /tmp/$d/records.jsonl "$OUT/$d.jsonl"; else cp /tmp/$d/records.partial.jsonl "$OUT/$d.jsonl" 2> /dev/null; fi
  mkdir -p "$LOGS/$d" && cp /tmp/$d/work/*.log "$LOGS/$d/" 2> /dev/null
done
grep -h "^truth\|^lanes" "$LOGS/after.log" 2> /dev/null
python3 "$ROOT/bench/memory/kernel-table.py" "$OUT/after.jsonl" "$OUT/before.jsonl" "${LOOKED:-}" > "$OUT/table.md" 2>&1
cat "$OUT/table.md"
python3 "$ROOT/bench/memory/kernel-cost.py" "$OUT/after.jsonl" "$OUT/before.jsonl" > "$OUT/cost.txt" 2>&1
cat "$OUT/cost.txt"
tar -C "$LOGS" -czf "$OUT/logs.tgz" . 2> /dev/null
echo "all: $(( $(date +%s) - began )) s"
