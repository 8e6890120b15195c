#!/usr/bin/env bash
# Where doctor's time over the floor goes (issue 17), on a GPU machine, interleaved in one run:
#   floor        python -c "import torch; torch.zeros(1, device='cuda')"
#   probe_full   the probe alone (python - < probe.py); its own JSON gives each child's duration
#   doctor_full  gpuprep doctor --json -v: -v logs each process with its start offset and duration
#   doctor_from  gpuprep doctor --from a snapshot saved here: Node alone (load, rules, render)
#   import_EXT   python -c "import torch; import EXT" for each extension the probe import-checks
# Writes to $OUT: profile.tsv (run, case, seconds, exit), children.tsv (run, child, ms), the -v
# lines of each doctor run, a Node CPU profile of one doctor run, and a summary. Run from the
# repo root with node, dist/ and production node_modules present:
#   OUT=/tmp/out RUNS=7 bash bench/device/doctor-profile.sh
set -u
OUT=${OUT:-$PWD/out}
RUNS=${RUNS:-7}
PY=$(command -v "${PYTHON:-python3}")
WORK=$(mktemp -d)
mkdir -p "$OUT"
GPUPREP=(node dist/src/cli/main.js)
FLOOR="import torch; torch.zeros(1, device='cuda' if torch.cuda.is_available() else 'cpu')"
printf 'run\tcase\tseconds\texit\n' >"$OUT/profile.tsv"
printf 'run\tchild\tms\n' >"$OUT/children.tsv"

time_case() {
  local run=$1 name=$2 start end status
  shift 2
  start=$(date +%s%N)
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  status=$?
  end=$(date +%s%N)
  printf '%s\t%s\t%s\t%s\n' "$run" "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", (b-a)/1e9}')" \
    "$status" >>"$OUT/profile.tsv"
}

# The children the probe ran and how long each took, from its JSON (the last line of its stdout).
children_of() {
  "$PY" - "$1" "$2" <<'PY' >>"$OUT/children.tsv"
import json, sys
doc = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
py = doc["python"]
print("%s\ttorch\t%s" % (sys.argv[1], py["torchLive"]["durationMs"]))
for ext in py["extensions"]:
    print("%s\text:%s\t%s" % (sys.argv[1], ext["module"], ext["durationMs"]))
print("%s\tprobe_total\t%s" % (sys.argv[1], py["probe"]["durationMs"]))
PY
}

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc
  "$PY" -c 'import torch; print("torch", torch.__version__)'
  node --version
} >"$OUT/machine.txt" 2>&1

"$PY" -c "import torch" >/dev/null 2>&1 # page cache warm for whichever case goes first
"${GPUPREP[@]}" doctor --python "$PY" --save "$WORK/facts.json" >/dev/null 2>&1
EXTENSIONS=$("$PY" -c 'import json,sys; print(" ".join(e["module"] for e in json.load(open(sys.argv[1]))["python"]["extensions"]))' "$WORK/facts.json")
echo "extensions import-checked: $EXTENSIONS" >>"$OUT/machine.txt"
# The probe alone gets the extension list doctor passes it (--extensions: the KB's import-checks table).
mapfile -t PROBE_ARGS < <(node -e 'import("./dist/src/gather/probe.js").then((m) => console.log(m.knownExtensionArgs().join("\n")))')

for run in $(seq 1 "$RUNS"); do
  time_case "$run" floor "$PY" -c "$FLOOR"
  time_case "$run" probe_full "$PY" - "${PROBE_ARGS[@]}" <dist/src/probe/probe.py
  children_of "$run" "$WORK/probe_full.out"
  time_case "$run" doctor_full "${GPUPREP[@]}" doctor --json -v --python "$PY"
  sed "s/^/$run\t/" "$WORK/doctor_full.err" >>"$OUT/doctor-verbose.txt"
  time_case "$run" doctor_from "${GPUPREP[@]}" doctor --json --from "$WORK/facts.json"
  for ext in $EXTENSIONS; do
    time_case "$run" "import_$ext" "$PY" -c "import torch; import $ext"
  done
done

# One doctor run under Node's sampling profiler (not timed: the profiler slows it down).
node --cpu-prof --cpu-prof-dir="$WORK/prof" dist/src/cli/main.js doctor --json --python "$PY" >/dev/null 2>&1
cp "$WORK"/prof/*.cpuprofile "$OUT/doctor.cpuprofile" 2>/dev/null

{
  printf 'case\tmedian_s\tmin_s\tmax_s\truns\n'
  cut -f2 "$OUT/profile.tsv" | tail -n +2 | awk '!seen[$0]++' | while read -r name; do
    awk -F'\t' -v n="$name" '$2==n{print $3}' "$OUT/profile.tsv" | sort -n | awk -v n="$name" '
      {v[NR]=$1} END {m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s\t%.3f\t%.3f\t%.3f\t%d\n", n, m, v[1], v[NR], NR}'
  done
  printf '\nchild\tmedian_ms\n'
  cut -f2 "$OUT/children.tsv" | tail -n +2 | awk '!seen[$0]++' | while read -r name; do
    awk -F'\t' -v n="$name" '$2==n{print $3}' "$OUT/children.tsv" | sort -n | awk -v n="$name" '
      {v[NR]=$1} END {m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s\t%.0f\n", n, m}'
  done
} | tee "$OUT/summary.tsv"
rm -rf "$WORK"
