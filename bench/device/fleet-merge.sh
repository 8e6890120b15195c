#!/usr/bin/env bash
# Merge benchmark of gpuprep fleet on a quiet machine (issue 14 target: 1,000 snapshots <= 2 s,
# <= 500 MB). Needs Node >= 20 carried in (the device machine has none) and a built checkout:
#   npm ci && npm run build   (on the dev box; carry dist/, node_modules/ and the node binary)
#   OUT=/tmp/out bash bench/device/fleet-merge.sh
# No GPU is used; the device machine is only a quiet machine with many cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/fleet-merge-bench}
mkdir -p "$OUT"
{
  echo "# $(date -u +%FT%TZ) $(uname -a)"
  echo "# nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), node $(node --version)"
  node dist/bench/fleet-merge.js 1000 5
} | tee "$OUT/fleet-merge.txt"
