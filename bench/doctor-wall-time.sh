#!/usr/bin/env bash
# Wall time of `gpuprep doctor` (full and --fast) beside `python -m torch.utils.collect_env`, the
# anchor, in the same run. Usage: bench/doctor-wall-time.sh PYTHON [RUNS]   (after npm run build)
set -euo pipefail
PY=${1:?usage: doctor-wall-time.sh PYTHON [RUNS]}
RUNS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EMPTY=$(mktemp -d)
trap 'rm -rf "$EMPTY"' EXIT
timed() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true # doctor exits 1 when it finds errors
  end=$(date +%s%N)
  echo "scale=2; ($end - $start) / 1000000000" | bc
}
for label in collect_env "doctor full" "doctor --fast"; do
  times=()
  for _ in $(seq "$RUNS"); do
    case $label in
      collect_env) times+=("$(timed "$PY" -m torch.utils.collect_env)") ;;
      "doctor full") times+=("$(cd "$EMPTY" && timed node "$ROOT/dist/src/cli/main.js" doctor --python "$PY")") ;;
      "doctor --fast") times+=("$(cd "$EMPTY" && timed node "$ROOT/dist/src/cli/main.js" doctor --python "$PY" --fast)") ;;
    esac
  done
  echo "$label: ${times[*]} s"
done
