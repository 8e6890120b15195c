#!/usr/bin/env bash
# Merge benchmark of gpuprep fleet on a quiet machine (issue 14 target: 1,000 snapshots <= 2 s,
# <= 500 MB; issue 26 on realistic snapshots: 1,000 <= 1 s and <= 300 MB, 10,000 <= 8 s and
# <= 1 GB). Needs Node >= 20 carried in (the device machine has none) and a built checkout:
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
  node dist/bench/fleet-merge.js 10000 3
  node dist/bench/fleet-merge.js 1000 3 --names-only
} | tee "$OUT/fleet-merge.txt"
