#!/usr/bin/env bash
# Builds libjitcal twice for the GPU of this machine: PTX only and SASS only (issue 27's JIT
# calibration). usage: build.sh OUTDIR   (needs nvcc and nvidia-smi; prints what each file holds)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
nvcc --version | tail -2
echo "device compute capability: sm_$cc"
nvcc -O2 -shared -Xcompiler -fPIC -gencode "arch=compute_$cc,code=compute_$cc" -o "$out/libjitcal_ptx.so" "$here/jitcal.cu"
nvcc -O2 -shared -Xcompiler -fPIC -gencode "arch=compute_$cc,code=sm_$cc" -o "$out/libjitcal_sass.so" "$here/jitcal.cu"
cp "$here/_jitcal.py" "$here/jitcal_ptx.py" "$here/jitcal_sass.py" "$out/"
for variant in ptx sass; do
  echo "== libjitcal_$variant.so: cuobjdump --list-elf / --list-ptx"
  cuobjdump --list-elf "$out/libjitcal_$variant.so" 2>&1 || true
  cuobjdump --list-ptx "$out/libjitcal_$variant.so" 2>&1 || true
done
