#!/usr/bin/env bash
# Times `gpuprep doctor --json` (full and --fast) beside the anchor `python3 -m torch.utils.collect_env`,
# interleaved in one run on the same machine, 5 runs each; writes per-run times and medians to $OUT.
# Targets (issue 2): full <= collect_env, fast <= 1 s. Issue 17: doctor_full - floor <= 0.5 s
# median, where floor is `python -c "import torch; torch.zeros(1, device='cuda')"` (what any torch
# check pays), and doctor on an environment without torch (doctor_notorch, a fresh venv) <= 0.5 s.
# Run from the repo root with dist/ and node_modules present and node on PATH:
#   OUT=/tmp/out bash bench/doctor-bench.sh
# CASES="floor doctor_full ..." runs a subset (default: all).
set -u
OUT=${OUT:-$(mktemp -d)}
RUNS=${RUNS:-5}
PY=${PYTHON:-python3}
GPUPREP=(node dist/src/cli/main.js doctor --json --python "$(command -v "$PY")")
LOGS="$OUT/logs"  # per-case stdout/stderr of the last run; tarred at the end ($OUT takes at most 8 files)
mkdir -p "$LOGS"
results="$OUT/doctor-bench.tsv"
printf 'run\tcase\tseconds\texit\n' >"$results"

# One timed command: wall seconds (nanosecond clock) and exit status into the TSV; output kept for the last run.
time_case() {
  local run=$1 name=$2
  shift 2
  local start end status
  start=$(date +%s%N)
  "$@" >"$LOGS/$name.out" 2>"$LOGS/$name.err"
  status=$?
  end=$(date +%s%N)
  printf '%s\t%s\t%s\t%s\n' "$run" "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", (b-a)/1e9}')" "$status" >>"$results"
}

CASES=${CASES:-collect_env doctor_full doctor_fast probe_full probe_fast floor doctor_notorch}
wanted() { case " $CASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac }
# A Python without torch: a fresh venv of the same interpreter (no packages, no site-packages).
NOTORCH="$OUT/notorch-venv"
if wanted doctor_notorch && ! "$PY" -m venv --without-pip "$NOTORCH" >/dev/null 2>&1; then
  echo "doctor_notorch skipped: $PY -m venv failed" >&2
  CASES=${CASES//doctor_notorch/}
fi
# The floor: what any check that imports torch and touches the GPU pays.
FLOOR="import torch; torch.zeros(1, device='cuda' if torch.cuda.is_available() else 'cpu')"

# Warm the page cache once so run 1 is not a cold-disk outlier for whichever case goes first.
"$PY" -c "import torch" >/dev/null 2>&1
for run in $(seq 1 "$RUNS"); do
  wanted collect_env && time_case "$run" collect_env "$PY" -m torch.utils.collect_env
  wanted floor && time_case "$run" floor "$PY" -c "$FLOOR"
  wanted doctor_full && time_case "$run" doctor_full "${GPUPREP[@]}"
  wanted doctor_fast && time_case "$run" doctor_fast "${GPUPREP[@]}" --fast
  wanted doctor_notorch && time_case "$run" doctor_notorch node dist/src/cli/main.js doctor --json --python "$NOTORCH/bin/python"
  # The probe alone (no node): separates the Python side from the rules and rendering.
  # shellcheck disable=SC2016 # $0 expands in the inner shell, on purpose
  wanted probe_full && time_case "$run" probe_full bash -c '"$0" - <dist/src/probe/probe.py' "$PY"
  # shellcheck disable=SC2016
  wanted probe_fast && time_case "$run" probe_fast bash -c '"$0" - --fast <dist/src/probe/probe.py' "$PY"
done

{
  printf 'case\tmedian_s\tmin_s\tmax_s\truns\n'
  for name in $CASES; do
    awk -F'\t' -v n="$name" '$2==n{print $3}' "$results" | sort -n | awk -v n="$name" '
      {v[NR]=$1} END {m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s\t%.3f\t%.3f\t%.3f\t%d\n", n, m, v[1], v[NR], NR}'
  done
} | tee "$OUT/doctor-bench-summary.tsv"
nproc >"$OUT/machine.txt"; nvidia-smi -L >>"$OUT/machine.txt" 2>&1; "$PY" -c "import torch;print(torch.__version__)" >>"$OUT/machine.txt" 2>&1
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$LOGS"
