#!/usr/bin/env bash
# Issue 24 on a GPU machine, one phase per device call (run from the repository root, or from a copy
# holding bench/ and src/memory/memory.py):
#   PHASE=fit      the registry sweep (bench/memory/sweep.py, fake CUDA tensors, in the background)
#                  and the "fit" accuracy cells: the trace and the allocator model against real steps,
#                  the real allocation order replayed through the allocator model, the CUDA context
#   PHASE=holdout  the held-out accuracy cells (families in no fit cell), the rest of the sweep
#                  (RESUME=earlier sweep rows) and, with node and dist/ present, the measured search
# Writes into $OUT (default ./out): gpu.txt, sweep-h100.jsonl, memory-PHASE-h100.jsonl and its
# summary, logs.tgz (each cell's stderr, the sweep's log).
set -u
PHASE=${PHASE:-fit}
OUT=${OUT:-$PWD/out}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
{
  date -u +%FT%TZ
  echo "idle: $(nvidia-smi --query-gpu=name,memory.total,memory.used,memory.reserved,driver_version --format=csv,noheader)"
  python3 -c 'import torch, transformers, accelerate; print("torch", torch.__version__, "transformers", transformers.__version__, "accelerate", accelerate.__version__)'
  python3 -c 'import peft; print("peft", peft.__version__)' 2>&1 | tail -1
  python3 -c 'import bitsandbytes; print("bitsandbytes", bitsandbytes.__version__)' 2>&1 | tail -1
  nproc
} > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

SWEEP_ARGS=""
[ -n "${RESUME:-}" ] && SWEEP_ARGS="--resume $RESUME"
python3 "$ROOT/bench/memory/sweep.py" --out "$OUT/sweep-h100.jsonl" --workers "${SWEEP_WORKERS:-11}" --device cuda \
  --timeout 45 --budget "${SWEEP_BUDGET:-200}" $SWEEP_ARGS > "$WORK/sweep.log" 2>&1 &
SWEEP=$!

python3 "$ROOT/bench/memory/accuracy.py" run --set "$PHASE" --out "$OUT/memory-$PHASE-h100.jsonl" \
  --summary "$OUT/memory-$PHASE-h100.summary.json" --workers "${WORKERS:-3}" --budget "${BUDGET:-170}" \
  --cell-timeout 110 > "$WORK/accuracy.log" 2>&1
grep -v '^ \|^{\|^}' "$WORK/accuracy.log" | tail -40
wait "$SWEEP"
grep -v '^E1\|Warning\|warn' "$WORK/sweep.log" | tail -3
for f in "$OUT"/*.log; do [ -e "$f" ] && mv "$f" "$WORK/"; done
tar -C "$WORK" -czf "$OUT/logs.tgz" .
python3 - "$OUT/memory-$PHASE-h100.jsonl" <<'PY'
import json, sys
MIB = 2 ** 20
for line in open(sys.argv[1]):
    r = json.loads(line)
    t, tr = r.get("truth") or {}, r.get("trace") or {}
    a, chk = tr.get("allocator") or {}, t.get("allocatorCheck") or {}
    if t.get("status") != "ok" or not tr:
        print("%-16s b=%-4s %s %s %s" % (r.get("model"), r.get("batch"), t.get("status"), r.get("traceStatus"), (t.get("error") or r.get("traceError") or "")[:120]))
        continue
    alloc, res = t["peakAllocatedBytes"], t["peakReservedBytes"]
    ctx = (t.get("processUsedBytes") or 0) - (t.get("reservedNowBytes") or 0)
    print("%-16s %-13s b=%-4s alloc %+6.2f%% simres %+6.2f%% realreplay %+6.2f%% res/alloc %5.1f%% ctx %d MiB" % (
        r["model"], r.get("task"), r["batch"], 100.0 * (tr["peakAllocatedBytes"] - alloc) / alloc,
        100.0 * ((a.get("peakReservedBytes") or 0) - res) / res,
        100.0 * ((chk.get("modelPeakReservedBytes") or 0) - res) / res, 100.0 * (res - alloc) / alloc, ctx // MIB))
PY

# The measured search through the CLI (needs node, dist/ and production node_modules beside bench/):
# a ~400M model (Pythia-410M's shape), 1..64 at 1,024 tokens, bf16 autocast, AdamW; wall time and trials.
if [ "$PHASE" = "holdout" ] && [ -d "$ROOT/dist" ] && command -v node > /dev/null; then
  mkdir -p /tmp/pythia-410m
  python3 - <<'PY'
import json, sys
sys.path.insert(0, "bench/memory")
PY
  python3 -c "import json,sys; sys.path.insert(0,'$ROOT/bench/memory'); import accuracy; json.dump(accuracy.configs(False)['pythia-410m'], open('/tmp/pythia-410m/config.json','w'))"
  start=$(date +%s)
  node "$ROOT/dist/src/cli/main.js" memory --model /tmp/pythia-410m/config.json --amp bf16 --seq-len 1024 \
    --batch 1..64 --measure --json --html "$OUT/memory-measure-pythia410m-h100.html" \
    > "$OUT/memory-measure-pythia410m-h100.json" 2> "$WORK/measure.err"
  echo "measured search: exit $? in $(( $(date +%s) - start )) s"
  tail -3 "$WORK/measure.err"
  python3 - "$OUT/memory-measure-pythia410m-h100.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("estimate maxBatch", r["verdict"]["maxBatch"], "measured", r["measuredMaxBatch"], "best", r["bestThroughputBatch"])
for t in r["trials"]:
    print("  trial b=%s %s alloc %.2f GiB reserved %.2f GiB" % (t["batch"], t["status"], (t["peakAllocatedBytes"] or 0) / 2**30, (t["peakReservedBytes"] or 0) / 2**30))
for n in r["notes"]:
    print("  note:", n)
PY
  tar -C "$WORK" -czf "$OUT/logs.tgz" .
fi
