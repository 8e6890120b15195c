#!/usr/bin/env bash
# Native uv e2e on a GPU machine without network (the device machine): `gpuprep init` plans a
# native setup for this machine's GPU with one source build, the generated scripts/setup-native.sh
# runs for real (uv sync from a wheelhouse repacked from the machine's own torch venv, the demo
# CUDA extension compiled by uv against that torch), and the result is checked: the venv has the
# planned torch, the extension's kernel runs on the GPU, and `gpuprep scan` shows it was compiled
# for exactly this GPU.
# usage: test/init/device/native-uv-e2e.sh OUT_DIR [pyproject|requirements]
#   (TORCH_VENV: a venv with torch, ninja, setuptools, wheel)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
out="${1:?usage: native-uv-e2e.sh OUT_DIR [pyproject|requirements]}"
kind="${2:-pyproject}"
venv="${TORCH_VENV:-/opt/torch/.venv}"
py="$venv/bin/python"
gpuprep() { node "$root/dist/src/cli/main.js" "$@"; }
project="$(mktemp -d)/native-e2e"
mkdir -p "$project/wheelhouse" "$out"

torch_series="$("$py" -c 'import torch; print(".".join(torch.__version__.split(".")[:2]))')"
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$py" "$root/test/init/device/repack-wheels.py" "$site" "$project/wheelhouse" torch ninja setuptools wheel > "$out/wheelhouse.txt"
# The demo extension as an sdist with static metadata (PKG-INFO 2.2), which uv's match-runtime needs.
tar -C "$root/test/init/device" -czf "$project/wheelhouse/gpuprep_demo_ext-0.1.0.tar.gz" \
  --transform 's,^demo-ext,gpuprep_demo_ext-0.1.0,' demo-ext
if [ "$kind" = requirements ]; then
  printf 'torch==%s.*\ngpuprep-demo-ext\n' "$torch_series" > "$project/requirements.txt"
else
  cat > "$project/pyproject.toml" << EOF
[project]
name = "native-e2e"
version = "0.1.0"
requires-python = ">=3.12"
dependencies = ["torch==$torch_series.*", "gpuprep-demo-ext"]

[tool.uv]
package = false
EOF
fi

gpuprep init --project "$project" --strategy native --wheelhouse wheelhouse \
  --build-from-source gpuprep-demo-ext > "$out/init.txt" 2>&1
cp "$project/scripts/setup-native.sh" "$project/SETUP.md" "$out/"
if [ "$kind" = pyproject ]; then cp "$project/pyproject.toml" "$out/"; fi
UV_CACHE_DIR="$(mktemp -d)" bash "$project/scripts/setup-native.sh" > "$out/setup.txt" 2>&1

"$project/.venv/bin/python" - > "$out/check.txt" 2>&1 << 'EOF'
import torch
import gpuprep_demo_ext

x = torch.arange(4, dtype=torch.float32, device="cuda")
y = gpuprep_demo_ext.add_one(x)
assert torch.equal(y.cpu(), torch.arange(1, 5, dtype=torch.float32)), y
print("torch", torch.__version__, "add_one ran on", torch.cuda.get_device_name())
print(gpuprep_demo_ext.__file__)
EOF
so="$(tail -n 1 "$out/check.txt")"
gpuprep scan "$so" > "$out/scan.txt" 2>&1
echo "native uv e2e: ok" | tee "$out/result.txt"
