#!/usr/bin/env bash
# Captures, on a GPU machine, the passive GPU health sources gpuprep's probe reads (issue 26 item 4):
# nvidia-smi's full query (text and XML), its ECC / page retirement / row remapper / performance
# sections, the health fields of --query-gpu and --query-remapped-rows, the NVLink error counters
# and status, NVML read directly (nvml-dump.py beside this script, through pynvml), the kernel log's
# NVRM/Xid lines where readable, and which DCGM / fabric manager tools exist. Every command's
# stdout, stderr and exit status are kept as they came, so a fixture is the bytes the tool printed.
#   OUT=/tmp/out bash bench/device/capture-gpu-health.sh    -> $OUT/gpu-health.tar.gz
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}/gpu-health
mkdir -p "$out"
run() {
  name=$1
  shift
  "$@" >"$out/$name" 2>"$out/$name.stderr"
  echo "$?" >"$out/$name.rc"
}
timed() {
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  echo "$(((($(date +%s%N) - start)) / 1000000)) ms: $*" >>"$out/timings.txt"
}
HEALTH=index,uuid,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,clocks_event_reasons.active
run smi.txt nvidia-smi
run smi-q.txt nvidia-smi -q
run smi-q.xml nvidia-smi -q -x
run smi-q-d.txt nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE
run smi-q-d.xml nvidia-smi -q -x -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE
run help-query-gpu.txt nvidia-smi --help-query-gpu
run help-query-remapped-rows.txt nvidia-smi --help-query-remapped-rows
run query-health.csv nvidia-smi --query-gpu=$HEALTH --format=csv,noheader,nounits
run query-remapped-rows.csv nvidia-smi --query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv,noheader
run nvlink-e.txt nvidia-smi nvlink -e
run nvlink-s.txt nvidia-smi nvlink -s
run nvml.json python3 "$here/nvml-dump.py"
run kernel-log.txt sh -c 'dmesg 2>&1 | grep -E "NVRM|Xid" | tail -200'
run environment.txt sh -c 'uname -a; cat /proc/driver/nvidia/version; ls -l /dev/kmsg /dev/nvidia* 2>&1; for t in dcgmi nv-hostengine nv-fabricmanager nvidia-fabricmanager journalctl; do printf "%s: " "$t"; command -v "$t" || echo absent; done; python3 -c "import pynvml; print(\"pynvml\", getattr(pynvml, \"__version__\", \"?\"))"'
for _ in 1 2 3; do
  timed nvidia-smi -q -x
  timed nvidia-smi --query-gpu=$HEALTH --format=csv,noheader,nounits
  timed nvidia-smi -q -x -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE
done
tar czf "$OUT/gpu-health.tar.gz" -C "$OUT" gpu-health
cat "$out"/*.rc "$out/timings.txt" | tr '\n' ' '
