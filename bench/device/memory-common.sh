# Sourced by the bench/device/memory-*.sh device runs: the two pieces each of them needs.
# shellcheck shell=bash

# limited SECONDS COMMAND...: the command in its own process group; the whole group is ended at the
# limit (TERM, then KILL 3 s later), so no trial or trace process it started holds the GPU into the
# next part of the run.
limited() {
  local limit=$1 pid watch rc
  shift
  setsid "$@" &
  pid=$!
  ( sleep "$limit"; kill -TERM -- "-$pid" 2> /dev/null; sleep 3; kill -KILL -- "-$pid" 2> /dev/null ) &
  watch=$!
  wait "$pid"
  rc=$?
  kill "$watch" 2> /dev/null
  kill -KILL -- "-$pid" 2> /dev/null
  return $rc
}

# record_machine FILE: the machine a run's figures belong to (time, the idle GPU, the library
# versions, the CPU), written to FILE and printed.
record_machine() {
  {
    date -u +%FT%TZ
    echo "idle: $(nvidia-smi --query-gpu=name,memory.total,memory.used,memory.reserved,driver_version --format=csv,noheader)"
    python3 -c 'import torch, transformers, accelerate, peft; print("torch", torch.__version__, "transformers", transformers.__version__, "accelerate", accelerate.__version__, "peft", peft.__version__, "cudnn", torch.backends.cudnn.version())'
    lscpu | grep -m1 "Model name"
    nproc
  } > "$1" 2>&1
  cat "$1"
}
