#!/usr/bin/env bash
# The readers issue 25 added, fuzzed at full size on a many-core machine (issue 28 item 11: >= 1M
# inputs each): every target of bench/fuzz-remote.mjs gets 1,000,000 inputs, split over processes
# by how fast it runs (the HTML index reader is the slowest), each process with its own PRNG seed
# so the streams are distinct. No GPU is used. Needs Node >= 20, python3 and GNU tar (the seeds are
# real wheels and tarballs), and a built checkout (dist/, a production node_modules).
# Usage: OUT=/tmp/out [SPLIT="lock:16"] bash bench/device/fuzz-remote.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/fuzz-remote-out}
mkdir -p "$OUT/logs"
echo "# $(date -u +%FT%TZ) nproc $(nproc) load $(cut -d' ' -f1-3 /proc/loadavg) node $(node --version)" | tee "$OUT/fuzz-remote.txt"
# target:processes (processes x inputs per process = 1,000,000)
split=${SPLIT:-"html:6 lock:3 stream:2 pep691:1 zip:1 tar:1 oci:1 variant:1"}
pids=()
for entry in $split; do
  target=${entry%%:*}
  procs=${entry##*:}
  per=$(((1000000 + procs - 1) / procs))
  for ((k = 1; k <= procs; k++)); do
    seed=$((100 + k))
    node bench/fuzz-remote.mjs "$per" "$seed" --target "$target" >"$OUT/logs/$target-$seed.log" 2>&1 &
    pids+=($!)
  done
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for f in "$OUT"/logs/*.log; do
  echo "== $(basename "$f" .log)"
  cat "$f"
done >>"$OUT/fuzz-remote.txt"
rm -rf "$OUT/logs"
echo "# exit $status" >>"$OUT/fuzz-remote.txt"
exit $status
