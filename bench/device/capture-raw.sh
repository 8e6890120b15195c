#!/usr/bin/env bash
# Raw facts from the device machine (H100), captured once to ground parsers and fixtures.
# Run there with: bash bench/device/capture-raw.sh  (writes $OUT/raw.tgz)
set -u
D=$(mktemp -d)
cd "$D" || exit 1
nvidia-smi >nvidia-smi.txt 2>&1
nvidia-smi -q >nvidia-smi-q.txt 2>&1
nvidia-smi --query-gpu=index,name,uuid,compute_cap,memory.total,mig.mode.current,persistence_mode,pci.bus_id,driver_version,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm,clocks.max.mem --format=csv >query.csv 2>&1
cat /proc/driver/nvidia/version >proc-driver-version.txt 2>&1
cat /sys/module/nvidia/version >sys-module-nvidia-version.txt 2>&1
{ time python3 -m torch.utils.collect_env; } >collect_env.txt 2>&1
{ time python3 -m torch.utils.collect_env; } >collect_env2.txt 2>&1
python3 -m pip list --format=json >pip-list.json 2>pip-list.err
python3 - >torch.txt 2>&1 <<'PY'
import sys, os, json, time
t = time.time()
import torch
print(json.dumps({
  "import_s": time.time() - t, "executable": sys.executable, "prefix": sys.prefix, "base_prefix": sys.base_prefix,
  "path": sys.path, "torch_file": torch.__file__, "arch_list": torch.cuda.get_arch_list(), "cuda": torch.version.cuda,
  "cudnn": torch.backends.cudnn.version(), "cap": torch.cuda.get_device_capability(), "name": torch.cuda.get_device_name(),
  "props": str(torch.cuda.get_device_properties(0)), "nccl": str(torch.cuda.nccl.version()),
  "flash": torch.backends.cuda.flash_sdp_enabled(), "mem_eff": torch.backends.cuda.mem_efficient_sdp_enabled(),
  "cudnn_sdp": torch.backends.cuda.cudnn_sdp_enabled(), "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
}, indent=1))
PY
env | sort >env.txt
df -B1 /dev/shm >shm.txt 2>&1
ulimit -a >ulimit.txt 2>&1
cat /etc/os-release >os-release.txt 2>&1
uname -a >uname.txt
cat /proc/1/cgroup >cgroup.txt 2>&1; ls -la /.dockerenv /run/.containerenv >container-markers.txt 2>&1
SP=$(python3 -c 'import torch,os;print(os.path.dirname(os.path.dirname(torch.__file__)))')
echo "$SP" >site-packages.txt
du -sh "$SP" >>site-packages.txt
find "$SP" -name '*.so*' -type f | wc -l >>site-packages.txt
find "$SP" -name '*.so*' -type f -printf '%s %p\n' | sort -n >so-files.txt
{ /usr/bin/time -v cuobjdump --list-elf "$SP/torch/lib/libtorch_cuda.so"; } >cuobj-elf.txt 2>&1
{ /usr/bin/time -v cuobjdump --list-ptx "$SP/torch/lib/libtorch_cuda.so"; } >cuobj-ptx.txt 2>&1
which cuobjdump nvcc python3 >tools.txt 2>&1; nvcc --version >>tools.txt 2>&1; cat /usr/local/cuda/version.json >>tools.txt 2>&1
ls /etc/pip* /etc/pip.conf 2>&1 >pip-conf.txt; python3 -m pip config list >>pip-conf.txt 2>&1
tar czf "$OUT/raw.tgz" .
