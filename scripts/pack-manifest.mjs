// `npm pack`/`npm publish` lifecycle: the published package.json carries no `prepare` script.
// In a clone, `prepare` builds gpuprep on `npm ci` (the README's quick start relies on that); in an
// installed tarball it would do nothing useful, and npm 11 warns about it as an install script not
// covered by allowScripts. The same approach as pinst: drop it before packing, restore it after.
//   node scripts/pack-manifest.mjs strip    (prepack)
//   node scripts/pack-manifest.mjs restore  (postpack)
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const MANIFEST = "package.json";
const SAVED = ".package.json.prepack";

const mode = process.argv[2];
if (mode === "strip") {
  if (existsSync(SAVED)) {
    console.error(
      `${SAVED} exists: a previous pack did not finish; restore it first (node scripts/pack-manifest.mjs restore)`,
    );
    process.exit(1);
  }
  const text = readFileSync(MANIFEST, "utf8");
  writeFileSync(SAVED, text);
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + "\n");
} else if (mode === "restore") {
  if (existsSync(SAVED)) renameSync(SAVED, MANIFEST);
} else {
  console.error("usage: node scripts/pack-manifest.mjs strip|restore");
  process.exit(2);
}
