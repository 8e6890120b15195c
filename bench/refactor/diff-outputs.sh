#!/bin/bash
# Counts the outputs of bench/refactor/outputs.sh that differ between two runs, after masking what
# differs by design: each run's worktree path and the capture time doctor --target stamps.
# usage: bench/refactor/diff-outputs.sh BASE_OUTDIR BASE_WORKTREE BRANCH_OUTDIR BRANCH_WORKTREE
A=$1; AW=$(cd "$2" && pwd); B=$3; BW=$(cd "$4" && pwd); n=0; d=0
mask() { sed -e "s#$2#WT#g" -e 's/"capturedAt": *"[^"]*"/"capturedAt":"X"/g' -e 's/captured [0-9T:.Z-]*/captured X/g' "$1"; }
for f in "$A"/*.out; do
  n=$((n + 1))
  g="$B/$(basename "$f")"
  if ! cmp -s <(mask "$f" "$AW") <(mask "$g" "$BW"); then
    d=$((d + 1))
    echo "DIFF $(basename "$f"): $(head -1 "$f")"
  fi
done
echo "$n outputs, $d differ"
