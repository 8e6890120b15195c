#!/usr/bin/env bash
# The diagnosis benchmark's GPU-dependent cases (bench/diagnosis/cases.mjs), built for real on a GPU
# machine whose torch has CUDA: variables set for the run, extensions compiled there with nvcc for
# other architectures, dist-infos and projects in a temp dir. Nothing outside that temp dir changes
# (no driver, MIG or ulimit settings: those cases stay capture-based on CPU). Each case's
# `doctor --json` is scored by bench/diagnosis/score-reports.mjs as run.mjs scores its own.
# Run from the repo root with dist/ and node_modules carried and node on PATH, e.g.
#   xz -dc .device-node/node.xz > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
#   OUT=/tmp/out bash bench/device/diagnosis.sh          (PY=... picks the python; default the torch venv)
# F33 needs Debian's NumPy 1.24 headers at .device-extra/numpy1-include (see
# test/fixtures/builders/numpy1-module/build.sh); F77 fires only with two or more GPUs (run it on a
# multi-GPU kind); F56 needs a CUDA toolkit whose major differs from torch's and is skipped without one.
# Writes $OUT/diagnosis-device.json, $OUT/diagnosis-device.txt and $OUT/reports/<case>.json.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
ROOT=$(pwd)
PY=${PY:-/opt/torch/.venv/bin/python3} # torch 2.11.0+cu130 on the device
WORK=$(mktemp -d /tmp/gpuprep-diagnosis.XXXXXX)
REPORTS=$OUT/reports
CASES=$OUT/cases.jsonl
LOG=$OUT/diagnosis-log.txt
mkdir -p "$REPORTS" "$WORK/no-project"
: >"$CASES"
BUILDERS=$ROOT/test/fixtures/builders
SOURCES=$ROOT/bench/diagnosis/sources
NGC=NVIDIA_PYTORCH_VERSION=25.01

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | paste -sd ';')" >"$LOG"
echo "python: $PY $("$PY" -c 'import torch, numpy; print(torch.__version__, torch.version.cuda, numpy.__version__)')" >>"$LOG"

# One case: ID CATALOG EXPECT MIN_SEVERITY ACCEPT(comma list) HOW [VAR=value...] -- doctor flags.
# ACCEPT names rules for another, separate defect of the environment as built (as in cases.mjs).
# EXPECT "-" makes a healthy control; CATALOG "-" a rule without a catalog entry.
bench_case() {
  local id=$1 catalog=$2 expect=$3 min=$4 accept=$5 how=$6
  shift 6
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  "$PY" -c 'import json, sys
i, c, e, m, a, h = sys.argv[1:]
print(json.dumps({"id": i, "catalog": None if c == "-" else c, "expect": None if e == "-" else e,
                  "minSeverity": m, "accept": [x for x in a.split(",") if x], "how": h}))' \
    "$id" "$catalog" "$expect" "$min" "$accept" "$how" >>"$CASES"
  local start
  start=$(date +%s.%N)
  (cd "$WORK/no-project" && env "${envs[@]}" node "$ROOT/dist/src/cli/main.js" doctor --python "$PY" "$@" \
    --json >"$REPORTS/$id.json" 2>"$REPORTS/$id.stderr")
  local code=$?
  echo "$id: env ${envs[*]} doctor $* -> exit $code in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s" >>"$LOG"
}

NOPROJ=(--project "$WORK/no-project")
site_with() { mkdir -p "$WORK/$1" && echo "$WORK/$1"; }
dist_info() { # DIR NAME VERSION [Requires-Dist...]
  local dir
  dir=$1/$(echo "$2" | tr - _)-$3.dist-info
  mkdir -p "$dir"
  { printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$2" "$3"; shift 3; for r in "$@"; do printf 'Requires-Dist: %s\n' "$r"; done; echo; } >"$dir/METADATA"
  echo pip >"$dir/INSTALLER"
}
INCLUDE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SUFFIX=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')

# Healthy controls.
bench_case control-healthy - - warning "" "the torch environment as it is" -- "${NOPROJ[@]}"
mkdir -p "$WORK/pin-met"
printf '[project]\nname = "trainer"\nversion = "0.1.0"\ndependencies = ["torch>=2.0"]\n' >"$WORK/pin-met/pyproject.toml"
bench_case control-project-pin-met - - warning "" "a project asking for torch>=2.0" -- --project "$WORK/pin-met"

# Variables, set for real.
bench_case F18-arch-list-excludes-gpu F18 torch-cuda-arch-list-excludes-gpu warning "" 'TORCH_CUDA_ARCH_LIST="7.0 8.0"' \
  TORCH_CUDA_ARCH_LIST="7.0 8.0" -- "${NOPROJ[@]}"
bench_case F58-arch-list-invalid F58 torch-cuda-arch-list-invalid warning "" \
  'TORCH_CUDA_ARCH_LIST=sm_90' TORCH_CUDA_ARCH_LIST=sm_90 -- "${NOPROJ[@]}"
bench_case F46-cuda-launch-blocking F46 debug-env-left-on warning "" CUDA_LAUNCH_BLOCKING=1 CUDA_LAUNCH_BLOCKING=1 -- "${NOPROJ[@]}"
bench_case F47-no-cuda-memory-caching F47 debug-env-left-on warning "" PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- "${NOPROJ[@]}"
bench_case F48-module-loading-eager F48 debug-env-left-on info "" CUDA_MODULE_LOADING=EAGER CUDA_MODULE_LOADING=EAGER -- "${NOPROJ[@]}"
bench_case F49-cuda-cache-disabled F49 debug-env-left-on warning "" CUDA_CACHE_DISABLE=1 CUDA_CACHE_DISABLE=1 -- "${NOPROJ[@]}"
bench_case F50-alloc-conf-bogus F50 alloc-conf-invalid warning "" PYTORCH_CUDA_ALLOC_CONF=bogus \
  PYTORCH_CUDA_ALLOC_CONF=bogus -- "${NOPROJ[@]}"
bench_case cuda-visible-devices-empty - cuda-visible-devices-hides-gpus warning "" 'CUDA_VISIBLE_DEVICES=""' \
  CUDA_VISIBLE_DEVICES= -- "${NOPROJ[@]}"
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  bench_case F77-nccl-p2p-disabled F77 nccl-transport-disabled warning "" NCCL_P2P_DISABLE=1 NCCL_P2P_DISABLE=1 -- "${NOPROJ[@]}"
  bench_case F77-nccl-shm-disabled F77 nccl-transport-disabled warning "" NCCL_SHM_DISABLE=1 NCCL_SHM_DISABLE=1 -- "${NOPROJ[@]}"
else
  echo "F77: skipped, one GPU (NCCL transports matter between GPUs)" >>"$LOG"
fi
mkdir -p "$WORK/cuda-12.4/lib64"
bench_case F36-ld-library-path-cuda12 F36 ld-library-path-foreign-cuda warning "" "LD_LIBRARY_PATH=<dir>/cuda-12.4/lib64" \
  LD_LIBRARY_PATH="$WORK/cuda-12.4/lib64" -- "${NOPROJ[@]}"
bench_case F45-triton-cache-unwritable F45 jit-cache-unwritable warning "" TRITON_CACHE_DIR=/etc/passwd/triton \
  TRITON_CACHE_DIR=/etc/passwd/triton -- "${NOPROJ[@]}"
bench_case F69-inductor-cache-unwritable F69 jit-cache-unwritable warning "" TORCHINDUCTOR_CACHE_DIR=/proc/gpuprep-inductor \
  TORCHINDUCTOR_CACHE_DIR=/proc/gpuprep-inductor -- "${NOPROJ[@]}"

# The CUDA toolkit source builds would use.
mkdir -p "$WORK/needs-flash-attn"
echo "flash-attn==2.8.3" >"$WORK/needs-flash-attn/requirements.txt"
bench_case F55-cuda-home-without-toolkit F55 cuda-toolkit-missing warning "" \
  "CUDA_HOME=/usr/local/cuda-12.8 (absent), PATH without nvcc, project needing flash-attn" \
  CUDA_HOME=/usr/local/cuda-12.8 PATH="$(dirname "$(command -v node)"):/usr/bin:/bin" -- --project "$WORK/needs-flash-attn"
TORCH_MAJOR=$("$PY" -c 'import torch; print(torch.version.cuda.split(".")[0])')
OTHER=""
for nvcc in /usr/local/cuda-*/bin/nvcc "$(command -v nvcc)"; do
  [ -x "$nvcc" ] || continue
  major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  if [ -n "$major" ] && [ "$major" != "$TORCH_MAJOR" ]; then OTHER=$(dirname "$(dirname "$nvcc")"); break; fi
done
if [ -n "$OTHER" ]; then
  bench_case F56-toolkit-major-differs F56 cuda-toolkit-torch-mismatch warning "" "CUDA_HOME=$OTHER (torch CUDA $TORCH_MAJOR)" \
    CUDA_HOME="$OTHER" -- "${NOPROJ[@]}"
else
  echo "F56: skipped, no CUDA toolkit with a major other than torch's ($TORCH_MAJOR)" >>"$LOG"
fi

# Binaries built here with nvcc for other architectures.
D=$(site_with sm80-lib)
mkdir -p "$D/xformers" && touch "$D/xformers/__init__.py"
nvcc -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -o "$D/xformers/_C_sm80.so" "$SOURCES/kernel.cu" >>"$LOG" 2>&1
dist_info "$D" xformers 0.0.0+gpuprep.bench
bench_case F17-extension-sm80-only F17 extension-arch-missing warning "" "xformers with an sm_80-only library (nvcc) on PYTHONPATH" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
bash "$BUILDERS/sm80-extension/build.sh" "$PY" "$WORK/sm80-src" >>"$LOG" 2>&1
"$PY" -m pip install -q --no-build-isolation --no-deps --target "$WORK/sm80-site" "$WORK/sm80-src" >>"$LOG" 2>&1
bench_case F17-extension-sm80-import F17 extension-arch-missing warning "" \
  "xformers whose sm_80-only module launches a kernel at import" PYTHONPATH="$WORK/sm80-site" -- "${NOPROJ[@]}"
D=$(site_with ptx-lib)
mkdir -p "$D/causal_conv1d" && touch "$D/causal_conv1d/__init__.py"
nvcc -shared -Xcompiler -fPIC -gencode arch=compute_80,code=compute_80 -o "$D/causal_conv1d/causal_conv1d_cuda.so" \
  "$SOURCES/kernel.cu" >>"$LOG" 2>&1
bench_case F65-ptx-only-library F65 ptx-only-coverage warning "" "a library with compute_80 PTX only (nvcc) on PYTHONPATH" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"

# Distributions and extensions that do not fit this torch.
D=$(site_with xformers-pin)
dist_info "$D" xformers 0.0.28.post3 "torch==2.5.1" numpy
bench_case F06-xformers-pins-other-torch F06 installed-torch-pin-conflict warning "" "xformers dist-info requiring torch==2.5.1" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
D=$(site_with torchvision-pin)
dist_info "$D" torchvision 0.20.1 numpy "torch==2.5.1"
bench_case F07-torchvision-for-other-torch F07 installed-torch-pin-conflict warning "" "torchvision dist-info requiring torch==2.5.1" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
D=$(site_with two-tritons)
dist_info "$D" pytorch-triton 3.2.0+git4b3bb1f8
bench_case F38-second-triton F38 installed-torch-pin-conflict warning "" "a pytorch-triton dist-info beside the venv's triton" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
D=$(site_with torch-twice)
dist_info "$D" torch 2.5.1
bench_case F08-torch-dist-info-twice F08 torch-installed-twice warning "" "a torch 2.5.1 dist-info on PYTHONPATH" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
D=$(site_with undefined-symbol)
mkdir -p "$D/xformers" && echo "from . import _C  # noqa: F401" >"$D/xformers/__init__.py"
gcc -shared -fPIC -I"$INCLUDE" -o "$D/xformers/_C$SUFFIX" "$BUILDERS/xformers-undefined-symbol/xformers/_C.c" >>"$LOG" 2>&1
dist_info "$D" xformers 0.0.0+gpuprep.bench
bench_case F30-extension-undefined-symbol F30 extension-import-failed warning "" "xformers whose _C needs c10::cuda::SetDevice" \
  PYTHONPATH="$D" -- "${NOPROJ[@]}"
if [ -d "$ROOT/.device-extra/numpy1-include" ]; then
  bash "$BUILDERS/numpy1-module/build.sh" "$PY" "$ROOT/.device-extra/numpy1-include" "$WORK/np1" >>"$LOG" 2>&1
  bench_case F33-numpy1-module F33 numpy-abi-mismatch warning "" "np1_module (NumPy 1.24 headers), --import-check" \
    PYTHONPATH="$WORK/np1" -- "${NOPROJ[@]}" --import-check np1_module
else
  echo "F33: skipped, no .device-extra/numpy1-include" >>"$LOG"
fi

# NGC-image markers and projects.
"$("$PY" -c 'import sys; print(sys._base_executable)')" -m venv --without-pip "$WORK/plain-venv" >>"$LOG" 2>&1
(PY="$WORK/plain-venv/bin/python" bench_case F11-ngc-venv-hides-torch F11 ngc-torch-hidden warning "" \
  "a plain venv with NVIDIA_PYTORCH_VERSION=25.01" "$NGC" -- "${NOPROJ[@]}")
echo "torch==2.6.0a0+ecf3bae40a" >"$WORK/constraint.txt"
bench_case F12-ngc-constraint-violated F12 ngc-pip-constraint-not-applied warning "" "PIP_CONSTRAINT pinning torch==2.6.0a0" \
  "$NGC" PIP_CONSTRAINT="$WORK/constraint.txt" -- "${NOPROJ[@]}"
mkdir -p "$WORK/uv-route" && cp "$ROOT/test/fixtures/projects/uv-cu126-route/pyproject.toml" "$WORK/uv-route/"
bench_case F13-uv-sync-in-ngc F13 uv-sync-replaces-torch warning "" \
  "uv project routing torch to cu126, NVIDIA_PYTORCH_VERSION set" "$NGC" -- --project "$WORK/uv-route"
mkdir -p "$WORK/cpu-index"
printf -- '--index-url https://download.pytorch.org/whl/cpu\ntorch==2.5.1\n' >"$WORK/cpu-index/requirements.txt"
bench_case F01-project-cpu-index F01 project-torch-cpu-only warning project-torch-pin-mismatch,project-replaces-torch \
  "requirements.txt installing torch==2.5.1 from the cpu index" -- --project "$WORK/cpu-index"
mkdir -p "$WORK/pin-cu124"
printf -- '--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n' >"$WORK/pin-cu124/requirements.txt"
bench_case F10-project-pin-differs F10 project-torch-pin-mismatch warning "" \
  "requirements.txt pinning torch==2.5.1+cu124" -- --project "$WORK/pin-cu124"

node "$ROOT/bench/diagnosis/score-reports.mjs" "$CASES" "$REPORTS" --out "$OUT/diagnosis-device.json" | tee "$OUT/diagnosis-device.txt"
cat "$LOG"
rm -rf "$WORK"
