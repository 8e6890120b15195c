#!/usr/bin/env bash
# gpuprep validate on the H100 machine, then an independent timing of the same shapes.
# The lead runs it there from the repo root, with dist/ and node_modules carried:
#   xz -dc .device-node/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
#   bash bench/device/validate-h100.sh
# Writes to $OUT (7 files): validate-h100.{json,html,xml,txt}, validate-accuracy.{txt,json}, run-log.txt
set -u
OUT=${OUT:-/tmp/validate-out}
mkdir -p "$OUT"
LOG="$OUT/run-log.txt"
export PYTHONUNBUFFERED=1
{
  echo "== $(date -u +%FT%TZ) $(uname -m) node $(node --version 2>&1) python3 $(command -v python3)"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit,pcie.link.gen.current,pcie.link.width.current --format=csv
} >"$LOG" 2>&1

start=$(date +%s%N)
node dist/src/cli/main.js validate --json --html "$OUT/validate-h100.html" --junit "$OUT/validate-h100.xml" \
  >"$OUT/validate-h100.json" 2>>"$LOG"
rc=$?
end=$(date +%s%N)
echo "validate exit code $rc, wall time $(((end - start) / 1000000)) ms" | tee -a "$LOG"

# The text table, judged again from the saved report (no second run).
NO_COLOR=1 node dist/src/cli/main.js validate --from "$OUT/validate-h100.json" >"$OUT/validate-h100.txt" 2>>"$LOG"
cat "$OUT/validate-h100.txt"

python3 bench/validate-accuracy.py "$OUT/validate-h100.json" "$OUT/validate-accuracy.json" 2>>"$LOG" |
  tee "$OUT/validate-accuracy.txt"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
