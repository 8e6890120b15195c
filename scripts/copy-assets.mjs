// Copies the non-TypeScript files the CLI needs at run time (the Python probe and payloads,
// knowledge-base JSON) from src/ into dist/, keeping their relative paths, and makes the bin
// executable: tsc writes it 0644, and `npx gpuprep` in a clone then fails "Permission denied".
import { chmodSync, cpSync, readFileSync, readdirSync, statSync, mkdirSync } from "node:fs";
import { join, dirname, extname } from "node:path";

const ASSET_EXTENSIONS = new Set([".py", ".json", ".html", ".css"]);

function copyAssets(fromDir, toDir) {
  for (const name of readdirSync(fromDir)) {
    const from = join(fromDir, name);
    const to = join(toDir, name);
    if (statSync(from).isDirectory()) copyAssets(from, to);
    else if (ASSET_EXTENSIONS.has(extname(name))) {
      mkdirSync(dirname(to), { recursive: true });
      cpSync(from, to);
    }
  }
}

copyAssets("src", join("dist", "src"));
for (const bin of Object.values(JSON.parse(readFileSync("package.json", "utf8")).bin)) chmodSync(bin, 0o755);
