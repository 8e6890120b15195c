#!/usr/bin/env bash
# Issue 17's speed targets in one device call, each beside its anchor in the same run:
#   1. doctor beside the floor (python -c "import torch; torch.zeros(1, device='cuda')") and on a
#      torch-less venv, interleaved, $RUNS runs each (bench/doctor-bench.sh): overhead <= 0.5 s
#      median, torch-less <= 0.5 s;
#   2. scan of libtorch_cuda.so beside cuobjdump --list-elf (bench/device/scan-bench.sh):
#      >= 30x faster, <= 0.2 s;
#   3. where the time over the floor goes (bench/device/doctor-profile.sh, 5 runs).
# Run from the repo root with node, dist/ and production node_modules present:
#   OUT=/tmp/out RUNS=15 bash bench/device/speed-issue17.sh
set -u
OUT=${OUT:-$PWD/out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
CASES="floor doctor_full doctor_notorch" RUNS="${RUNS:-15}" OUT="$WORK/doctor" bash bench/doctor-bench.sh >/dev/null 2>&1
cp "$WORK/doctor/doctor-bench-summary.tsv" "$OUT/doctor-bench-summary-h100.tsv"
cp "$WORK/doctor/doctor-bench.tsv" "$OUT/doctor-bench-h100.tsv"
cp "$WORK/doctor/machine.txt" "$OUT/machine.txt"
OUT="$WORK/scan" bash bench/device/scan-bench.sh >"$WORK/scan.log" 2>&1 || echo "scan bench failed: $(tail -n 3 "$WORK/scan.log")"
cp "$WORK/scan/scan-bench.txt" "$OUT/scan-bench-h100.txt"
OUT="$WORK/profile" RUNS=5 bash bench/device/doctor-profile.sh >/dev/null 2>&1
cp "$WORK/profile/summary.tsv" "$OUT/doctor-profile-summary-h100.tsv"
cp "$WORK/profile/doctor-verbose.txt" "$OUT/doctor-profile-verbose-h100.txt"
# The overhead per run (doctor minus the floor of the same run), then its median.
awk -F'\t' 'NR>1 && $2=="floor"{f[$1]=$3} NR>1 && $2=="doctor_full"{d[$1]=$3}
  END{for (r in d) if (r in f) printf "%.3f\n", d[r]-f[r]}' "$OUT/doctor-bench-h100.tsv" | sort -n |
  awk '{v[NR]=$1} END{m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "overhead per run (doctor_full - floor): median %.3f s, min %.3f, max %.3f, %d runs\n", m, v[1], v[NR], NR}' |
  tee "$OUT/overhead-h100.txt"
rm -rf "$WORK"
cat "$OUT/doctor-bench-summary-h100.tsv" "$OUT/scan-bench-h100.txt" "$OUT/doctor-profile-summary-h100.tsv"
