# shellcheck shell=bash
# Sourced first by the Docker end-to-end scripts (test/init/e2e/docker-e2e.sh, test/e2e/transports.sh),
# after `set -euo pipefail` and with $repo set: their temp dir and cache, `gpuprep`, `step` and
# `fail`, then the engine helpers (test/e2e/engine.sh: start_engine, ensure_rootfs_image, cleanup).
: "${repo:?}"
cache="${GPUPREP_E2E_CACHE:-/var/tmp/gpuprep-e2e}"
work="$(mktemp -d "/tmp/gpuprep-$(basename "$0" .sh).XXXXXX")"
mkdir -p "$cache"
gpuprep() { node "$repo/dist/src/cli/main.js" "$@"; }
step() { echo "== $*" >&2; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# shellcheck source=test/e2e/engine.sh
. "$repo/test/e2e/engine.sh"
