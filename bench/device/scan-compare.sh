#!/usr/bin/env bash
# Our fatbin reader against cuobjdump --list-elf / --list-ptx on every .so of the torch environment
# (and the committed fixtures): both normalised to "path<TAB>kind<TAB>sm_XY[a|f]" lines, one per
# entry, sorted; the difference is printed (expected: none). Run on a GPU machine from the repo
# root with node, dist/ and node_modules present. Writes $OUT/scan-compare.txt (+ .tsv.gz lists).
set -u
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
W=$(mktemp -d)
SP=$("$PY" -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
{ find "$SP" -type f \( -name '*.so' -o -name '*.so.*' \); ls -d "$PWD"/test/fixtures/fatbin/*.so "$PWD"/test/fixtures/fatbin/*.o; } | sort >"$W/files.txt"
echo "files: $(wc -l <"$W/files.txt") ($SP and test/fixtures/fatbin)"

# cuobjdump names entries "ELF file    1: libx.1.sm_90a.cubin" and "PTX file    1: libx.1.sm_90.ptx".
# One output file per input: parallel writers to one pipe interleave long outputs.
mkdir -p "$W/cuobjdump"
# shellcheck disable=SC2016 # expanded by the inner shell
xargs -P 12 -I{} sh -c '
  out="$2/$(printf %s "$1" | md5sum | cut -c1-16).tsv"
  cuobjdump --list-elf "$1" 2>/dev/null | sed -n "s/^ELF file *[0-9]*: .*\.\(sm_[0-9]*[af]\{0,1\}\)\.cubin$/\1/p" | sed "s|^|$1	sass	|" >"$out"
  cuobjdump --list-ptx "$1" 2>/dev/null | sed -n "s/^PTX file *[0-9]*: .*\.\(sm_[0-9]*[af]\{0,1\}\)\.ptx$/\1/p" | sed "s|^|$1	ptx	|" >>"$out"
' _ {} "$W/cuobjdump" <"$W/files.txt"
cat "$W"/cuobjdump/*.tsv | sort >"$W/cuobjdump.tsv"
# cuobjdump 13.0 prints family-specific cubins (sm_100f, flag 0x200000 in the entry header) without
# the "f"; the reader keeps it. Compare in cuobjdump's naming and count the family entries apart.
node bench/scan-list.mjs - <"$W/files.txt" 2>"$W/ours.err" | sort >"$W/ours-exact.tsv"
sed 's/\(sm_[0-9]*\)f$/\1/' "$W/ours-exact.tsv" | sort >"$W/ours.tsv"

{
  echo "gpuprep scan vs cuobjdump ($(cuobjdump --version | tail -1)), $(date -u +%FT%TZ)"
  echo "files compared: $(wc -l <"$W/files.txt")"
  echo "entries: cuobjdump $(wc -l <"$W/cuobjdump.tsv"), gpuprep $(wc -l <"$W/ours.tsv")"
  echo "files with CUDA code: cuobjdump $(cut -f1 "$W/cuobjdump.tsv" | sort -u | wc -l), gpuprep $(cut -f1 "$W/ours.tsv" | sort -u | wc -l)"
  echo "by kind/target (cuobjdump | gpuprep):"
  if diff <(cut -f2,3 "$W/cuobjdump.tsv" | sort | uniq -c) <(cut -f2,3 "$W/ours.tsv" | sort | uniq -c) >/dev/null; then
    echo "  identical"
  else
    diff <(cut -f2,3 "$W/cuobjdump.tsv" | sort | uniq -c) <(cut -f2,3 "$W/ours.tsv" | sort | uniq -c)
  fi
  cut -f2,3 "$W/ours.tsv" | sort | uniq -c | sort -rn | head -30
  echo "family-specific (f) entries the reader saw, listed without f by cuobjdump: $(grep -c 'f$' "$W/ours-exact.tsv")"
  grep 'f$' "$W/ours-exact.tsv" | cut -f1,3 | sort | uniq -c | sort -rn | head -10
  echo "differences (< only cuobjdump, > only gpuprep):"
  diff "$W/cuobjdump.tsv" "$W/ours.tsv" | grep '^[<>]' | head -50
  echo "difference lines: $(diff "$W/cuobjdump.tsv" "$W/ours.tsv" | grep -c '^[<>]')"
  echo "reader errors: $(wc -l <"$W/ours.err")"; head -5 "$W/ours.err"
} | tee "$OUT/scan-compare.txt"
gzip -c "$W/cuobjdump.tsv" >"$OUT/cuobjdump-entries.tsv.gz"
gzip -c "$W/ours-exact.tsv" >"$OUT/gpuprep-entries.tsv.gz"
