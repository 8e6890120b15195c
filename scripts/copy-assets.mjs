// Copies the non-TypeScript files the CLI needs at run time (the Python probe and payloads,
// knowledge-base JSON) from src/ into dist/, keeping their relative paths.
import { cpSync, readdirSync, statSync, mkdirSync } from "node:fs";
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
