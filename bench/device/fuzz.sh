#!/usr/bin/env bash
# The two fuzzers at full size on a many-core machine (issue 12 item 8: >= 1M inputs each): 8
# processes per fuzzer, each with its own PRNG seed (11..18) and 125,000 inputs, so the 1,000,000
# inputs of each fuzzer are distinct streams. No GPU is used. Needs Node >= 20 and a built
# checkout (dist/, production node_modules). Usage: OUT=/tmp/out bash bench/device/fuzz.sh [PER=125000]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/fuzz-out}
PER=${1:-125000}
mkdir -p "$OUT/logs"
echo "# $(date -u +%FT%TZ) nproc $(nproc) node $(node --version) per-process $PER" | tee "$OUT/fuzz.txt"
pids=()
for seed in 11 12 13 14 15 16 17 18; do
  node bench/fuzz-readers.mjs "$PER" "$seed" >"$OUT/logs/readers-$seed.log" 2>&1 &
  pids+=($!)
  node bench/fuzz-snapshots.mjs "$PER" "$seed" >"$OUT/logs/snapshots-$seed.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for f in "$OUT"/logs/*.log; do
  echo "== $(basename "$f")"
  cat "$f"
done >>"$OUT/fuzz.txt"
rm -rf "$OUT/logs"
echo "# exit $status" >>"$OUT/fuzz.txt"
exit $status
