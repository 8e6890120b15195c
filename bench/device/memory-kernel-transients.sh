#!/usr/bin/env bash
# Issue 24, kernels' own memory measured during the trace, before/after in one device call (run from
# a copy holding bench/ and src/memory/): three lanes side by side on one GPU,
#   after   bench/memory/lanes.py: the trace tier of each cell with its kernels measured on the GPU
#           (memory.py's default where a CUDA GPU is), and each cell's real run, ALONE among real
#           runs (3 steps + an eval step, max_memory_allocated, the process's nvidia-smi use);
#   before  the same traces with LANES_KERNEL_TRANSIENTS=0 (memory.py kernelTransients false: the
#           trace tier as it was, the fitted convolution allowance instead of measured workspaces);
#   ops     bench/memory/kernel-discovery.py on the cells of DISCOVER: which aten ops take memory of
#           their own in a real step, and whether memory.py measures them.
# Traces and discovery take little GPU memory beside a real run; each process's use is its own.
# Writes into $OUT: gpu.txt, after.jsonl, before.jsonl, discovery.jsonl, table.md, logs.tgz, events.tgz, log.txt.
# Env: SETS (holdout2), ONLY (cells or models), DISCOVER, LANES_S (330), WORKERS (5).
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
WORKERS=${WORKERS:-5}
ONLY_ARG=${ONLY:+--only $ONLY}
limited "$LANES_S" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-holdout2}" $ONLY_ARG --out /tmp/after \
  --trace-workers "$WORKERS" --budget $((LANES_S - 60)) --trace-timeout 200 --truth-timeout 60 2> "$LOGS/after.log" &
A=$!
LANES_KERNEL_TRANSIENTS=0 limited "$LANES_S" python3 "$ROOT/bench/memory/lanes.py" run --sets "${SETS:-holdout2}" $ONLY_ARG \
  --traces-only --out /tmp/before --trace-workers "$WORKERS" --budget $((LANES_S - 60)) --trace-timeout 200 2> "$LOGS/before.log" &
B=$!
if [ -n "${DISCOVER:-}" ]; then
  limited "$LANES_S" python3 "$ROOT/bench/memory/kernel-discovery.py" $DISCOVER > "$OUT/discovery.jsonl" 2> "$LOGS/discovery.log" &
  D=$!
fi
wait "$A"; echo "after lanes: exit $? at $(( $(date +%s) - began )) s"
wait "$B"; echo "before lanes: exit $? at $(( $(date +%s) - began )) s"
[ -n "${DISCOVER:-}" ] && { wait "$D"; echo "discovery: exit $? at $(( $(date +%s) - began )) s"; }
for d in after before; do
  if [ -f /tmp/$d/records.jsonl ]; then cp /tmp/$d/records.jsonl "$OUT/$d.jsonl"; else cp /tmp/$d/records.partial.jsonl "$OUT/$d.jsonl" 2> /dev/null; fi
  mkdir -p "$LOGS/$d" && cp /tmp/$d/work/*.log "$LOGS/$d/" 2> /dev/null
done
grep -h "^truth\|^lanes" "$LOGS/after.log" 2> /dev/null
python3 "$ROOT/bench/memory/kernel-table.py" "$OUT/after.jsonl" "$OUT/before.jsonl" > "$OUT/table.md" 2>&1
cat "$OUT/table.md"
python3 - "$OUT/discovery.jsonl" <<'PY' 2> /dev/null
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["model"], r.get("error") or "", ", ".join("%s x%d max %.1f MiB%s" % (o["op"], o["calls"], o["maxBytes"] / 2**20, "" if o["measured"] else " (NOT measured)") for o in r.get("ops", [])[:8]))
PY
tar -C "$LOGS" -czf "$OUT/logs.tgz" . 2> /dev/null
# The traced orders (before, after) and the real histories, to study offline.
(cd /tmp && tar -czf "$OUT/events.tgz" after/events before/events 2> /dev/null)
echo "all: $(( $(date +%s) - began )) s"
