#!/bin/bash
# A pure refactor's check: the same fixed set of gpuprep commands (kb of every kind, doctor/fleet over
# every saved snapshot, init --dry-run for the examples and fixture projects on 5 targets and odd
# --driver values, scan of every fixture binary), one output file each (the command, its output and
# stderr, its exit code). Run it on the base's build and the branch's, then diff-outputs.sh.
# usage: bench/refactor/outputs.sh WORKTREE OUTDIR   (WORKTREE built: npm run build)
W=$(cd "$1" && pwd); O=$2; rm -rf "$O"; mkdir -p "$O"
# A fixed scratch path (the working directory and HOME of every command): it shows in some outputs,
# so two runs must use the same one. Do not run two at once.
SCRATCH=${TMPDIR:-/tmp}/gpuprep-refactor-outputs
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/empty" "$SCRATCH/home"
G="node $W/dist/src/cli/main.js"
F=$W/test/fixtures
n=0
run() { n=$((n+1)); local f=$(printf "%s/%03d.out" "$O" $n); echo "\$ $*" > "$f"; (cd "$SCRATCH/empty" && HOME="$SCRATCH/home" NO_COLOR=1 "$@" >>"$f" 2>&1; echo "rc=$?" >>"$f"); }
for g in 5070ti 12.1 12.0 8.0 sm_90 sm_120 H100 "NVIDIA GB10" 7.5 10.0 3.5 9.0a foo dgx-spark rtx-4090; do run $G kb gpu "$g"; run $G kb gpu "$g" --json; done
for t in 2.7.0 2.9.0 2.5.1 1.13.1 2.8.0; do run $G kb torch $t --json; run $G kb torch $t; done
run $G kb ngc --json; run $G kb ngc
for t in 25.01 24.01 25.10 23.05; do run $G kb ngc $t --json; run $G kb ngc $t; done
for e in flash-attn xformers; do run $G kb ext $e --json; run $G kb ext $e; done
run $G kb cuda 12.8 --json; run $G kb cuda 13.0
run $G kb pkg vllm --json
for a in "5070ti 580.95.05" "NVIDIA_GB10 580.95.05" "8.0 535.104.05" "12.0 570" "9.0 550.54.15" "7.0 535" "12.1 575"; do set -- $a; gpu=${1//_/ }; run $G kb resolve --gpu "$gpu" --driver $2 --json; run $G kb resolve --gpu "$gpu" --driver $2; done
run $G kb resolve --gpu "NVIDIA GB10" --driver 580.95.05 --arch aarch64 --python 3.11 --json
for f in $F/facts/*.json; do run $G doctor --from $f --json; run $G doctor --from $f; done
for f in $F/facts/*.json; do run $G fleet scan --from $f --json; done
run $G fleet doctor --from $F/facts/h100-healthy.json $F/facts/h200x2-healthy.json $F/facts/debian-torch-cpu.json --json
run $G fleet doctor --from $F/facts/h100-healthy.json $F/facts/h200x2-healthy.json $F/facts/debian-torch-cpu.json
for p in $W/examples/*/ $F/projects/*/; do for t in dgx-spark rtx-5070-ti h100 t4 rtx-4090; do run $G init --dry-run --target $t --project $p --json; done; run $G init --dry-run --target dgx-spark --project $p; run $G doctor --target rtx-5070-ti --project $p --json; run $G doctor --target dgx-spark --project $p; done
for p in $W/examples/*/; do run $G init --dry-run --target h100 --strategy native --project $p --json; run $G init --dry-run --gpu 12.0 --driver 580 --project $p --json; done
for f in $F/fatbin/*.so $F/fatbin/*.o $F/fatbin/*.a $F/wheels/*.so; do for g in sm_120 9.0 8.0 12.1 sm_100; do run $G scan --gpu $g $f --json; done; run $G scan --gpu sm_120 $f; run $G scan --target dgx-spark $f --json; run $G scan --target h100 $f; run $G scan --from $F/facts/h100-healthy.json $f --json; done
run $G scan --gpu sm_999 $F/fatbin/sm_80.so; run $G scan --gpu bogus $F/fatbin/sm_80.so; run $G scan --target nope $F/fatbin/sm_80.so
run $G scan $F/fatbin --gpu 12.0 --json; run $G scan $F/fatbin $F/wheels
for w in $(find $F -name '*.whl' | head -5); do run $G scan --gpu 12.0 $w --json; done
run $G init --dry-run --from $F/facts/h100-healthy.json --project $W/examples/vision-training-rtx-5070-ti --json
run $G init --dry-run --from $F/facts/debian-locked-wheels.json --json
# DriverVersion / ImageTag additions
for d in 470 535.104.12 580.95.05 " 580.95.05 " 550 575.51.03 abc 580.x 999.1 1; do
  for t in dgx-spark h100 rtx-5070-ti t4; do run $G init --dry-run --target $t --driver "$d" --project $W/examples/vision-training-rtx-5070-ti --json; done
  run $G init --dry-run --target h100 --driver "$d" --project $W/examples/vision-training-rtx-5070-ti
  run $G init --dry-run --target dgx-spark --driver "$d" --strategy container --project $W/examples/vision-training-rtx-5070-ti --json
  run $G init --dry-run --gpu 9.0 --driver "$d" --project $W/examples/vision-training-rtx-5070-ti --json
  run $G doctor --target h100 --driver "$d" --project $W/examples/vision-training-rtx-5070-ti --json
  run $G doctor --target rtx-5070-ti --driver "$d" --project $W/examples/vision-training-rtx-5070-ti
  run $G kb resolve --gpu H100 --driver "$d" --json
  run $G kb resolve --gpu 12.0 --driver "$d"
done
for p in $W/examples/*/; do for d in 470 535.104.12 580.95.05; do run $G init --dry-run --target h100 --driver $d --strategy container --project $p --json; run $G init --dry-run --target rtx-4090 --driver $d --project $p; done; done
for t in 25.09 25.09-py3 25.09-py3-igpu 24.12 22.01 25.08-py3 x 25.9 2025.09; do run $G kb ngc $t --json; run $G kb ngc $t; done
run $G kb integrity --json; run $G kb integrity
for c in 11.8 12.1 12.4 12.6 13.0 12.9; do run $G kb cuda $c --json; done
run $G fleet doctor --from $F/facts/*.json --json
run $G fleet doctor --from $F/facts/*.json
rm -rf "$SCRATCH"
echo "$n outputs"
