// Prints every SASS/PTX entry gpuprep's wheel reader finds in the shared libraries of the given
// wheels (read from the zip, each library inflated as a stream, nothing extracted), as
// "member<TAB>kind<TAB>target" in cuobjdump's naming (compute_XY -> sm_XY), for
// bench/device/wheel-scan-compare.sh. Per-wheel times and reader errors go to stderr.
// Usage: node bench/wheel-scan-list.mjs WHEEL...   (or - to read paths from stdin)
import { readFileSync } from "node:fs";
import { scanWheel } from "../dist/src/remote/wheel.js";

let wheels = process.argv.slice(2);
if (wheels.length === 1 && wheels[0] === "-") wheels = readFileSync(0, "utf8").split("\n").filter(Boolean);
const lines = [];
const started = performance.now();
let next = 0;
async function worker() {
  while (next < wheels.length) {
    const path = wheels[next++];
    const t0 = performance.now();
    const scan = await scanWheel(path);
    const seconds = (performance.now() - t0) / 1000;
    const entries = scan.libraries.reduce((n, l) => n + l.entries.length, 0);
    console.error(
      `wheel\t${scan.filename}\t${seconds.toFixed(3)} s\t${scan.libraries.length} libraries\t${entries} entries`,
    );
    for (const library of scan.libraries) {
      if (library.error && library.error.code !== "not-elf")
        console.error(`error\t${library.path}\t${library.error.code}: ${library.error.message}`);
      if (library.passes > 1) console.error(`passes\t${library.path}\t${library.passes}`);
      for (const entry of library.entries) {
        if (entry.kind !== "sass" && entry.kind !== "ptx") continue;
        lines.push(`${library.path}\t${entry.kind}\t${entry.target.replace(/^compute_/, "sm_")}`);
      }
    }
  }
}
await Promise.all(Array.from({ length: Number(process.env.WHEELS_AT_ONCE ?? 6) }, worker));
console.error(`total\t${wheels.length} wheels\t${((performance.now() - started) / 1000).toFixed(3)} s`);
process.stdout.write(lines.join("\n") + (lines.length ? "\n" : ""));
