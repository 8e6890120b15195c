// Prints every SASS/PTX entry our reader finds in the given files as "path<TAB>kind<TAB>target",
// in cuobjdump's naming (PTX compute_XY is listed by cuobjdump as sm_XY), for
// bench/device/scan-compare.sh. Usage: node bench/scan-list.mjs FILE...   (or - to read paths from stdin)
import { readFileSync } from "node:fs";
import { scanFiles } from "../dist/src/fatbin/index.js";

let files = process.argv.slice(2);
if (files.length === 1 && files[0] === "-") files = readFileSync(0, "utf8").split("\n").filter(Boolean);
const lines = [];
for (const scan of await scanFiles(files)) {
  if (scan.error && scan.error.code !== "not-elf")
    console.error(`${scan.path}: ${scan.error.code}: ${scan.error.message}`);
  for (const entry of scan.entries) {
    if (entry.kind !== "sass" && entry.kind !== "ptx") continue;
    lines.push(`${scan.path}\t${entry.kind}\t${entry.target.replace(/^compute_/, "sm_")}`);
  }
}
process.stdout.write(lines.join("\n") + (lines.length ? "\n" : ""));
