#!/usr/bin/env bash
# The npm footprint of gpuprep with its schema library as it is (zod) and the two lighter ones issue
# 29 item 7 names: zod's mini build (zod/mini, inside the same zod package) and valibot (with
# @valibot/to-json-schema, which the JSON Schemas would need). Prints, for each: the packed and
# unpacked size of gpuprep's own tarball (npm pack --dry-run, in a copy of the checkout), the bytes
# and disk KiB of the production dependencies installed from the npm registry, and whether the
# settings JSON Schema the library generates equals schemas/gpuprep.settings.v1.schema.json.
#   bash bench/footprint/measure.sh        (from the repository root; needs the npm registry)
set -euo pipefail
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== gpuprep's own tarball (npm pack --dry-run, prepack builds dist/)"
mkdir "$work/pkg"
git ls-files -co --exclude-standard | grep -v '^node_modules' | tar -cf - -T - | tar -xf - -C "$work/pkg"
ln -s "$root/node_modules" "$work/pkg/node_modules"
(cd "$work/pkg" && npm pack --dry-run --json 2>/dev/null) |
  node -e 'const [p] = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(`packed ${p.size} B, unpacked ${p.unpackedSize} B, ${p.entryCount} files`)'

deps() { node -e 'const l = require(process.argv[1]); for (const n of process.argv.slice(2)) process.stdout.write(`${n}@${l.packages["node_modules/" + n].version} `)' "$root/package-lock.json" "$@"; }
install() { # DIR PACKAGE@VERSION...
  mkdir -p "$1" && (cd "$1" && npm init -y >/dev/null && npm install --omit=dev --no-audit --no-fund --ignore-scripts "${@:2}" >/dev/null)
  for p in "$1"/node_modules/[!@.]* "$1"/node_modules/@*/*; do
    [ -d "$p" ] || continue
    printf '  %-28s %9s B %6s KiB\n' "${p#"$1"/node_modules/}" "$(du -sb "$p" | cut -f1)" "$(du -sk "$p" | cut -f1)"
  done
  printf '  %-28s %9s B %6s KiB\n' "all production dependencies" "$(du -sb "$1/node_modules" | cut -f1)" "$(du -sk "$1/node_modules" | cut -f1)"
}
others=$(deps yaml smol-toml)

echo "== zod as now, and zod/mini (the same package: nothing less is installed)"
install "$work/zod" $(deps zod) $others
echo "  zod's own folders:"
for d in "$work"/zod/node_modules/zod/*/; do printf '    %-10s %9s B\n' "$(basename "$d")" "$(du -sb "$d" | cut -f1)"; done

echo "== valibot + @valibot/to-json-schema"
install "$work/valibot" valibot@1.5.0 @valibot/to-json-schema@1.8.0 $others

echo "== the settings JSON Schema each library generates, against schemas/gpuprep.settings.v1.schema.json"
cp "$root/bench/footprint/settings-zod-mini.mjs" "$work/zod/" && cp "$root/bench/footprint/settings-valibot.mjs" "$work/valibot/"
(cd "$work/zod" && node settings-zod-mini.mjs >"$work/mini.json")
(cd "$work/valibot" && node settings-valibot.mjs >"$work/valibot.json" 2>"$work/valibot.err")
for lib in mini valibot; do
  node -e '
    const shipped = require(process.argv[1]); for (const k of ["$id", "title", "description"]) delete shipped[k];
    const made = require(process.argv[2]);
    console.log(`  ${process.argv[3]}: ${JSON.stringify(shipped) === JSON.stringify(made) ? "identical" : "DIFFERENT"}`);
  ' "$root/schemas/gpuprep.settings.v1.schema.json" "$work/$lib.json" "$lib"
done
sed 's/^/  valibot warns: /' "$work/valibot.err"
diff <(node -e 'const s = require(process.argv[1]); for (const k of ["$id", "title", "description"]) delete s[k]; console.log(JSON.stringify(s, null, 1))' "$root/schemas/gpuprep.settings.v1.schema.json") \
  <(node -e 'console.log(JSON.stringify(require(process.argv[1]), null, 1))' "$work/valibot.json") | sed 's/^/    /' || true
