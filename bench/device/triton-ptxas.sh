#!/usr/bin/env bash
# Asks every ptxas Triton ships (triton/backends/nvidia/bin/ptxas*) and the toolkit's (PTXAS=...)
# which of the targets Triton passes as --gpu-name it assembles: a one-kernel PTX file with
# .target sm_XYa and the PTX ISA version Triton writes for that ptxas (compiler.py
# ptx_get_version: 12.8 -> 8.7, 12.9 -> 8.8, 13.x -> 9.x), assembled with --gpu-name=sm_XYa;
# and whether --help lists the target. Also prints how the installed Triton picks its ptxas
# (compiler.py get_ptxas) and which variables override it (knobs.py).
# Usage: [PYTHON=python3] [PTXAS=/usr/local/cuda/bin/ptxas] bash bench/device/triton-ptxas.sh
set -u
PY=${PYTHON:-python3}
TARGETS="90a 100a 103a 110a 120a 121a"
W=$(mktemp -d)
tools=()
triton=$("$PY" -c 'import importlib.util as u; s = u.find_spec("triton"); print(s.submodule_search_locations[0] if s else "")' 2>/dev/null)
if [ -n "$triton" ]; then
  echo "triton: $triton (version $("$PY" -c 'import importlib.metadata as m; print(m.version("triton"))' 2>/dev/null || echo '?'))"
  echo "get_ptxas in backends/nvidia/compiler.py:"
  grep -n -A4 "^def get_ptxas" "$triton/backends/nvidia/compiler.py" | sed 's/^/  /'
  echo "knobs.py, the tool variables:"
  grep -n "env_nvidia_tool(\|_PATH\|upper()" "$triton/knobs.py" | head -12 | sed 's/^/  /'
  for tool in "$triton"/backends/nvidia/bin/ptxas*; do [ -f "$tool" ] && tools+=("$tool"); done
fi
[ -n "${PTXAS:-}" ] && tools+=("$PTXAS")
for tool in "${tools[@]}"; do
  release=$("$tool" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\), \(V[0-9.]*\).*/\1 \2/p')
  version=${release%% *}
  major=${version%%.*}
  minor=${version##*.}
  if [ "$major" -ge 13 ]; then isa="$((9 + major - 13)).$minor"; elif [ "$minor" -ge 6 ]; then isa="8.$((minor - 1))"; else isa="8.$minor"; fi
  listed=$("$tool" --help | tr -d '\n' | sed 's/.*--gpu-name//; s/Default value.*//' | grep -o "'sm_[0-9]*[af]\?'" | tr -d "'" | tr '\n' ' ')
  echo "== $tool: release $release, PTX ISA $isa"
  echo "   --help sm_ targets: $listed"
  for t in $TARGETS; do
    printf '.version %s\n.target sm_%s\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n' "$isa" "$t" > "$W/k.ptx"
    if out=$("$tool" --gpu-name="sm_$t" -o "$W/k.cubin" "$W/k.ptx" 2>&1); then verdict="assembles"; else verdict="REFUSED: $(printf %s "$out" | head -1)"; fi
    case " $listed " in *" sm_$t "*) inhelp="listed" ;; *) inhelp="not listed" ;; esac
    echo "   sm_$t: $verdict ($inhelp in --help)"
  done
done
rm -rf "$W"
