#!/usr/bin/env bash
# init's real build, end to end, on a machine without a GPU or registry access:
#   1. a Docker engine of its own (Debian's docker.io, started here on a private socket and data
#      root: overlay2, or vfs where overlay mounts are refused), stopped and deleted on exit,
#   2. a stand-in for the NGC base (debootstrap'd Debian + python3-torch, NGC markers and a pip
#      constraint file), tagged gpuprep-test/ngc-standin:TAG, never with NVIDIA's own image name,
#   3. `gpuprep init` on a small project, offline from a local wheelhouse,
#   4. the generated scripts/run-container.sh builds FROM the stand-in (its BASE_IMAGE override)
#      and starts it (no --gpus: there is no GPU),
#   5. the probe inside: torch is still the base's, numpy imports, /dev/shm is the plan's 16g, the
#      model cache is mounted, and pip in the container refuses to replace torch.
# Needs root (dockerd, debootstrap), node, python3. Run by test/init/docker-e2e.test.ts on CI.
# Disk: the rootfs tar (1.6 GB) stays cached in $GPUPREP_E2E_CACHE; the engine's data (about 5 GB
# with overlay2, 20 GB with vfs, which copies every layer) is deleted when the script exits.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
here="$repo/test/init/e2e"
# shellcheck source=test/e2e/prelude.sh
. "$repo/test/e2e/prelude.sh"
start_engine
step "stand-in rootfs (debootstrap bookworm + python3-torch, cached in $cache)"
ensure_rootfs_image

step "project, wheelhouse and plan"
cp -r "$here/project" "$work/project"
python3 "$here/make-wheels.py" "$work/project/wheelhouse"
cp "$repo/dist/src/probe/probe.py" "$work/project/probe.py" # the built copy: torch_env.py is inlined there
gpuprep init --project "$work/project" --target h100 --driver 580.95.05 --strategy container \
  --wheelhouse wheelhouse --build-from-source tinyext --json > "$work/plan.json"
read -r image tag < <(python3 -c '
import json, sys
image = json.load(open(sys.argv[1]))["plan"]["container"]["image"]
print(image["image"], image["tag"])' "$work/plan.json")

standin="gpuprep-test/ngc-standin:$tag"
step "stand-in for $image tagged $standin"
docker build --quiet --file "$here/standin.Dockerfile" --build-arg "NGC_TAG=$tag" --tag "$standin" "$here" > /dev/null
base_torch="$(docker run --rm "$standin" python3 -c 'import torch; print(torch.__version__)')"

step "build and start with the generated run script"
export HOME="$work/home"
mkdir -p "$HOME"
cd "$work/project"
export GPUPREP_NO_GPU=1
export BASE_IMAGE="$standin" IMAGE="gpuprep-test/e2e-app:latest"
# Engines without a bridge network (started above) and sandboxes that may not lift memlock.
export DOCKER_NETWORK=none
hard_memlock="$(ulimit -H -l)"
if [ "$hard_memlock" != unlimited ]; then export MEMLOCK_LIMIT=$((hard_memlock * 1024)); fi
scripts/run-container.sh python3 /workspace/probe.py > "$work/probe.json" 2> "$work/run.log" ||
  fail "run-container.sh: $(tail -n 20 "$work/run.log")"
grep -q "starting without --gpus" "$work/run.log" || fail "the run script did not say it starts without GPUs"
mounts="$(scripts/run-container.sh --no-build cat /proc/self/mountinfo 2> /dev/null)"
helper="$(scripts/run-container.sh --no-build python3 -c 'import tinyhelper; print(tinyhelper.VALUE)' 2> /dev/null)"
# tinyext exists only as an sdist: importing it proves the build stage made a wheel the app stage installed.
built="$(scripts/run-container.sh --no-build python3 -c 'import tinyext; print(tinyext.VALUE)' 2> /dev/null)"
[ "$built" = "built from source" ] || fail "tinyext (source build stage) printed ${built@Q}"
if scripts/run-container.sh --no-build python3 -m pip install --no-index --find-links /workspace/wheelhouse \
  torch==99.0 > "$work/replace.log" 2>&1; then
  fail "pip inside the container replaced torch with the wheelhouse's torch 99.0"
fi

step "checks"
python3 - "$work/probe.json" "$base_torch" "$helper" <<'PY'
import json, sys
facts = json.load(open(sys.argv[1]))
base_torch, helper = sys.argv[2], sys.argv[3]
python = facts["python"]
problems = []
torch = python["torch"]
if torch is None or torch["version"] != base_torch:
    problems.append(f"torch is {torch and torch['version']}, the base has {base_torch}")
live = python["torchLive"]
if live["status"] != "ok" or live["result"]["version"] != base_torch:
    problems.append(f"torch does not import as the base's: {live['status']} {live.get('error')}")
if python["numpy"] is None or not (live["result"] or {}).get("numpy", {}).get("roundTrip"):
    problems.append(f"numpy: {python['numpy']} / {(live['result'] or {}).get('numpy')}")
# The default plan sizes the container's own /dev/shm (shm_size 16g), not the host's IPC namespace.
planned_shm = 16 * 2**30
if facts["host"]["shm"]["sizeBytes"] != planned_shm:
    problems.append(f"/dev/shm is {facts['host']['shm']['sizeBytes']} bytes, the plan asked {planned_shm} (no --shm-size=16g?)")
if helper != "3":
    problems.append(f"tinyhelper from the wheelhouse printed {helper!r}")
for problem in problems:
    print("FAIL:", problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
# The model and dataset caches, not the whole ~/.cache/huggingface: the login token stays on the host.
grep -q " /cache/huggingface/hub " <<< "$mounts" || fail "the model cache is not mounted at /cache/huggingface/hub"
grep -q " /cache/huggingface/datasets " <<< "$mounts" || fail "the datasets cache is not mounted at /cache/huggingface/datasets"
if grep -q " /cache/huggingface " <<< "$mounts"; then fail "the whole ~/.cache/huggingface (with the login token) is mounted"; fi
grep -qi "constraint\|conflict\|cannot install\|no matching distribution" "$work/replace.log" ||
  fail "pip refused torch 99.0 for another reason: $(tail -n 5 "$work/replace.log")"
echo "docker e2e: ok (base torch $base_torch kept; $standin standing in for $image)"
