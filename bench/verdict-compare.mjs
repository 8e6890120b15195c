// Verdicts (native / ptx-jit / cannot run) per library and GPU, from two entry lists of
// "member<TAB>kind<TAB>sm_XY[a|f]" (cuobjdump's and gpuprep's, in cuobjdump's naming), through
// gpuprep's one compatibility function; prints the count compared and every difference.
// Usage: node bench/verdict-compare.mjs CUOBJDUMP.tsv GPUPREP.tsv
import { readFileSync } from "node:fs";
import { coverageFor } from "../dist/src/kb/compat.js";

const GPUS = ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"];
function targetsByLibrary(file) {
  const map = new Map();
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const [member, kind, target] = line.split("\t");
    const name = kind === "ptx" ? target.replace(/^sm_/, "compute_") : target;
    if (!map.has(member)) map.set(member, new Set());
    map.get(member).add(name);
  }
  return map;
}
const reference = targetsByLibrary(process.argv[2]);
const ours = targetsByLibrary(process.argv[3]);
const libraries = new Set([...reference.keys(), ...ours.keys()]);
let compared = 0;
const differences = [];
const counts = {};
for (const library of [...libraries].sort()) {
  for (const gpu of GPUS) {
    const [major, minor] = gpu.split(".").map(Number);
    const a = coverageFor([...(reference.get(library) ?? [])], { major, minor }).how;
    const b = coverageFor([...(ours.get(library) ?? [])], { major, minor }).how;
    compared++;
    counts[`${gpu} ${b}`] = (counts[`${gpu} ${b}`] ?? 0) + 1;
    if (a !== b) differences.push(`${library}\t${gpu}\tcuobjdump ${a}\tgpuprep ${b}`);
  }
}
console.log(
  `verdicts compared: ${compared} (${libraries.size} libraries with CUDA code x ${GPUS.length} GPUs: ${GPUS.join(" ")})`,
);
console.log(`verdict differences: ${differences.length}`);
for (const line of differences.slice(0, 30)) console.log(`  ${line}`);
console.log("gpuprep's verdicts by GPU:");
for (const gpu of GPUS)
  console.log(
    `  ${gpu}: ${["sass", "ptx-jit", "none"].map((how) => `${how} ${counts[`${gpu} ${how}`] ?? 0}`).join(", ")}`,
  );
