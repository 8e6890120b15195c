// Copies the non-TypeScript files the CLI needs at run time (the Python probe and payloads,
// knowledge-base JSON) from src/ into dist/, keeping their relative paths, and makes the bin
// executable: tsc writes it 0644, and `npx gpuprep` in a clone then fails "Permission denied".
// A Python payload travels to its interpreter as one file (on stdin, or written to one temporary
// file), so a line `NAME = None  # @inline PATH` in it becomes NAME = r'''<PATH's text>''' in the
// copy: torch_env.py is one file in the source tree and a part of both payloads (probe, validate).
import { chmodSync, cpSync, readFileSync, readdirSync, statSync, mkdirSync, writeFileSync } from "node:fs";
import { join, dirname, extname } from "node:path";
import { inlinePython } from "./inline-python.mjs";

const ASSET_EXTENSIONS = new Set([".py", ".json", ".html", ".css"]);

function copyAssets(fromDir, toDir) {
  for (const name of readdirSync(fromDir)) {
    const from = join(fromDir, name);
    const to = join(toDir, name);
    if (statSync(from).isDirectory()) copyAssets(from, to);
    else if (ASSET_EXTENSIONS.has(extname(name))) {
      mkdirSync(dirname(to), { recursive: true });
      if (extname(name) === ".py") writeFileSync(to, inlinePython(from));
      else cpSync(from, to);
    }
  }
}

copyAssets("src", join("dist", "src"));
for (const bin of Object.values(JSON.parse(readFileSync("package.json", "utf8")).bin)) chmodSync(bin, 0o755);
