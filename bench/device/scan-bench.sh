#!/usr/bin/env bash
# gpuprep scan beside cuobjdump in one run: libtorch_cuda.so (median wall time and peak RSS of
# the whole process, node start-up included) and the whole torch site-packages.
# Targets (issue 4): libtorch_cuda.so <= 0.3 s median and <= 150 MB peak RSS; site-packages <= 5 s.
# Run from the repo root with node, dist/ and node_modules present. Writes $OUT/scan-bench.txt.
set -u
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
RUNS=${RUNS:-10}
SP=$("$PY" -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
LIB=$SP/torch/lib/libtorch_cuda.so
W=$(mktemp -d)
mkdir -p "$OUT"

measure() { # name runs command... -> "name<TAB>wall_s<TAB>max_rss_kb" per run into $W/runs.tsv
  local name=$1 runs=$2
  shift 2
  for _ in $(seq 1 "$runs"); do
    # Exit 1 from scan means "some library cannot run on this GPU": a result, not a failure.
    /usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err"
    [ $? -le 1 ] || echo "$name failed: $(tail -2 "$W/err")"
    sed -i '/^Command exited/d' "$W/t"
    read -r wall rss <"$W/t"
    printf '%s\t%s\t%s\n' "$name" "$wall" "$rss" >>"$W/runs.tsv"
  done
}

cat "$LIB" >/dev/null # page cache warm for everyone
measure gpuprep-libtorch_cuda "$RUNS" node dist/src/cli/main.js scan "$LIB" --gpu sm_90 --json
measure cuobjdump-list-elf-libtorch_cuda 3 cuobjdump --list-elf "$LIB"
measure gpuprep-site-packages 3 node dist/src/cli/main.js scan "$SP" --gpu sm_90 --json

median() { sort -n | awk '{v[NR]=$1} END {if (NR) printf "%.3f", (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
{
  echo "scan benchmark, $(date -u +%FT%TZ), $(nproc) cores, $(stat -c %s "$LIB") bytes libtorch_cuda.so, site-packages $(du -sh "$SP" | cut -f1)"
  printf 'case\truns\tmedian_s\tmin_s\tmax_s\tmedian_peak_rss_mb\n'
  for name in gpuprep-libtorch_cuda cuobjdump-list-elf-libtorch_cuda gpuprep-site-packages; do
    walls=$(awk -F'\t' -v n="$name" '$1==n{print $2}' "$W/runs.tsv")
    rss_kb=$(awk -F'\t' -v n="$name" '$1==n{print $3}' "$W/runs.tsv" | median)
    printf '%s\t%s\t%s\t%s\t%s\t%.1f\n' "$name" "$(echo "$walls" | wc -l)" "$(echo "$walls" | median)" \
      "$(echo "$walls" | sort -n | head -1)" "$(echo "$walls" | sort -n | tail -1)" "$(awk -v k="$rss_kb" 'BEGIN{print k/1024}')"
  done
  node dist/src/cli/main.js scan "$SP" --gpu sm_90 | tail -3
} | tee "$OUT/scan-bench.txt"
