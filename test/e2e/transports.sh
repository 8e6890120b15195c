#!/usr/bin/env bash
# doctor and validate through the Docker transports, against real containers of a real engine
# (Debian's docker.io, started by test/e2e/engine.sh on a private socket, deleted on exit):
#   1. doctor --container NAME: the probe runs inside; torch is the container's (Debian's 1.13),
#      the snapshot says where it came from;
#   2. validate --container NAME: the payload's source travels on stdin; the report names the
#      transport and the torch inside;
#   3. doctor --image REF: a throwaway container of the image;
#   4. memory --container NAME: the trace tier asks the container's Python, whose torch (1.13) is too
#      old for it, so the report falls back to the formula tier and says why.
# No GPU here: the checks that need CUDA fail, which is what the JSON must say, not a crash.
# Needs root (dockerd, debootstrap), node, python3. Run by test/e2e/transports.test.ts on CI.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=test/e2e/prelude.sh
. "$repo/test/e2e/prelude.sh"
start_engine
step "rootfs image $rootfs_image"
ensure_rootfs_image
base_torch="$(docker run --rm --network none "$rootfs_image" python3 -c 'import torch; print(torch.__version__)')"
name="gpuprep-test-transport-$$"
docker run -d --network none --name "$name" "$rootfs_image" sleep 900 > /dev/null

# Exit 0 or 1 (findings / failed checks) is a result; 2 means gpuprep could not run.
run_json() { # out-file, gpuprep args...
  local out=$1 status=0
  shift
  gpuprep "$@" --json > "$out" 2> "$out.err" || status=$?
  [ "$status" -le 1 ] || fail "gpuprep $* exited $status: $(head -n 3 "$out.err")"
}

step "doctor --container $name"
run_json "$work/doctor.json" doctor --container "$name"
step "validate --container $name"
run_json "$work/validate.json" validate --container "$name" --quick --only checks
step "doctor --image $rootfs_image"
run_json "$work/doctor-image.json" doctor --image "$rootfs_image"

step "memory --container $name"
cat > "$work/config.json" << 'JSON'
{"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 256, "n_head": 4, "n_layer": 4,
 "n_positions": 512, "vocab_size": 8000}
JSON
run_json "$work/memory.json" memory --container "$name" --model "$work/config.json" --target "H100 SXM" --batch 4

step "checks"
python3 - "$work" "$name" "$rootfs_image" "$base_torch" << 'PY'
import json, sys
work, name, image, base_torch = sys.argv[1:]
problems = []
def load(file):
    return json.load(open("%s/%s" % (work, file)))
for file, kind, ref in (("doctor.json", "container", name), ("doctor-image.json", "image", image)):
    facts = load(file)["facts"]
    if facts["target"]["kind"] != kind or facts["target"]["ref"] != ref:
        problems.append("%s: target is %s, not %s %s" % (file, facts["target"], kind, ref))
    torch = facts["python"]["torch"]
    if torch is None or torch["version"] != base_torch:
        problems.append("%s: torch %s, the container has %s" % (file, torch and torch["version"], base_torch))
    executable = facts["python"]["interpreter"]["executable"]
    if not executable.startswith("/usr/bin/python3"):
        problems.append("%s: the interpreter is %s, not the container's" % (file, executable))
report = load("validate.json")
if report.get("schema") != "gpuprep.validate":
    problems.append("validate: schema %r" % report.get("schema"))
if report.get("transport") != "container %s" % name:
    problems.append("validate: transport %r" % report.get("transport"))
env = report["payload"]["env"]["result"]
if env["torch"]["version"] != base_torch:
    problems.append("validate: torch %s inside, the container has %s" % (env["torch"]["version"], base_torch))
if env["cudaAvailable"]:
    problems.append("validate: CUDA available in a container without a GPU?")
memory = load("memory.json")
# Every tier searches the batch range (issue 24): the estimates are the search's points, the
# asked batch 4 among them, all from the formula tier where torch 1.13 cannot trace.
tiers = set(e.get("tier") for e in memory.get("estimates", []))
batches = [e.get("batch") for e in memory.get("estimates", [])]
if memory.get("schema") != "gpuprep.memory" or tiers != {"formula"} or 4 not in batches:
    problems.append("memory: schema %r, tiers %r, batches %r" % (memory.get("schema"), tiers, batches))
if not any(base_torch in note for note in memory.get("notes", [])):
    problems.append("memory: no note names the container's torch %s: %r" % (base_torch, memory.get("notes")))
for problem in problems:
    print("FAIL:", problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
docker rm -f "$name" > /dev/null
echo "transports e2e: ok (doctor, validate and memory inside $name, doctor in $rootfs_image; torch $base_torch)"
