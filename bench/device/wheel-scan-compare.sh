#!/usr/bin/env bash
# gpuprep's wheel reader against cuobjdump on the torch environment's CUDA packages: every
# installed distribution that ships shared libraries is zipped back into a wheel from its RECORD
# (bench/device/zip-site-packages.py); gpuprep reads each wheel (directory, then each library
# inflated as a stream; nothing extracted), cuobjdump --list-elf/--list-ptx reads the installed
# .so files (the same bytes the members inflate to). Both normalised to "member<TAB>kind<TAB>sm_XY"
# in cuobjdump's naming, compared per entry and per verdict (native / PTX JIT / cannot run on 11
# GPUs), with the wall time of each side. Writes $OUT/wheel-scan-compare.txt (+ .tsv.gz lists).
# Run from the repo root with node, dist/ and node_modules present.
set -u
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
W=$(mktemp -d)
SP=$("$PY" -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
now() { date +%s.%N; }

t0=$(now)
"$PY" bench/device/zip-site-packages.py "$SP" "$W/wheels" > "$W/wheels.tsv"
t1=$(now)
cut -f1 "$W/wheels.tsv" | sort > "$W/wheel-list.txt"

export UV_THREADPOOL_SIZE=16
node bench/wheel-scan-list.mjs - < "$W/wheel-list.txt" 2> "$W/ours.err" | sort > "$W/ours-all.tsv"
t2=$(now)

# The members that are shared libraries, as installed.
"$PY" -c 'import sys, zipfile, re; [print(n) for w in sys.stdin.read().split() for n in zipfile.ZipFile(w).namelist() if re.search(r"\.so(\.\d+)*$", n)]' < "$W/wheel-list.txt" | sort -u > "$W/members.txt"
# gpuprep also reads static archives (.a) in wheels; cuobjdump is run on the shared libraries only.
awk -F'\t' 'NR == FNR { m[$1] = 1; next } ($1 in m)' "$W/members.txt" "$W/ours-all.tsv" > "$W/ours-exact.tsv"
sed 's/\(sm_[0-9]*\)f$/\1/' "$W/ours-exact.tsv" | sort > "$W/ours.tsv"
t3=$(now)
mkdir -p "$W/cuobjdump"
# shellcheck disable=SC2016 # expanded by the inner shell
xargs -P 16 -I{} sh -c '
  out="$2/$(printf %s "$1" | md5sum | cut -c1-16).tsv"
  cuobjdump --list-elf "$3/$1" 2>/dev/null | sed -n "s/^ELF file *[0-9]*: .*\.\(sm_[0-9]*[af]\{0,1\}\)\.cubin$/\1/p" | sed "s|^|$1	sass	|" >"$out"
  cuobjdump --list-ptx "$3/$1" 2>/dev/null | sed -n "s/^PTX file *[0-9]*: .*\.\(sm_[0-9]*[af]\{0,1\}\)\.ptx$/\1/p" | sed "s|^|$1	ptx	|" >>"$out"
' _ {} "$W/cuobjdump" "$SP" < "$W/members.txt"
t4=$(now)
cat "$W"/cuobjdump/*.tsv | sort > "$W/cuobjdump.tsv"

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
{
  echo "gpuprep wheel reader vs cuobjdump ($(cuobjdump --version | tail -1)), $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo "site-packages: $SP"
  echo "wheels zipped from RECORD (deflate level 1): $(wc -l < "$W/wheels.tsv"), $(awk -F'\t' '{s+=$3} END {printf "%.2f GB", s/1e9}' "$W/wheels.tsv"), $(secs "$t0" "$t1") s to zip"
  echo "shared-library members: $(wc -l < "$W/members.txt")"
  echo "entries: cuobjdump $(wc -l < "$W/cuobjdump.tsv"), gpuprep $(wc -l < "$W/ours.tsv")"
  echo "libraries with CUDA code: cuobjdump $(cut -f1 "$W/cuobjdump.tsv" | sort -u | wc -l), gpuprep $(cut -f1 "$W/ours.tsv" | sort -u | wc -l)"
  echo "entry differences (< only cuobjdump, > only gpuprep):"
  diff "$W/cuobjdump.tsv" "$W/ours.tsv" | grep '^[<>]' | head -30
  echo "entry difference lines: $(diff "$W/cuobjdump.tsv" "$W/ours.tsv" | grep -c '^[<>]')"
  node bench/verdict-compare.mjs "$W/cuobjdump.tsv" "$W/ours.tsv"
  echo "family-specific (f) entries gpuprep saw, listed without f by cuobjdump: $(grep -c 'f$' "$W/ours-exact.tsv")"
  echo "reader errors (not counting text files named .so): $(grep -c '^error' "$W/ours.err")"; grep '^error' "$W/ours.err" | head -5
  echo "libraries that needed more than one pass: $(grep -c '^passes' "$W/ours.err")"
  echo "times (wall, one run each):"
  echo "  gpuprep, every wheel read from its zip (6 wheels at a time, UV_THREADPOOL_SIZE=16): $(secs "$t1" "$t2") s ($(grep '^total' "$W/ours.err"))"
  echo "  cuobjdump --list-elf + --list-ptx on the installed libraries (16 at a time): $(secs "$t3" "$t4") s"
  echo "slowest wheels (gpuprep, read 6 at a time, so each time includes waiting for the others):"
  grep '^wheel' "$W/ours.err" | sort -t$'\t' -k3 -rn | head -8 | sed 's/^/  /'
} | tee "$OUT/wheel-scan-compare.txt"
gzip -c "$W/cuobjdump.tsv" > "$OUT/wheel-cuobjdump-entries.tsv.gz"
gzip -c "$W/ours-exact.tsv" > "$OUT/wheel-gpuprep-entries.tsv.gz"
rm -rf "$W"
