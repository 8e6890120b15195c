// Fits the formula tier's activation coefficients on the memory bench's "fit" cells and reports
// its error on the "holdout" cells; --write stores the coefficients, the allocator overhead and the
// held-out accuracy (with the bench file and its commit as their source) in src/memory/calibration.json.
// Usage: npm run build && node bench/memory/fit-formula.mjs FILE.jsonl [--write] [--json] [--device-mib N] [--margin F]
// (--device-mib: the bench GPU's nvidia-smi memory.total, default the H100's 81559; --margin default 0.05), used to
// count out-of-memory cells the estimate called "fits".
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, relative, resolve } from "node:path";
import { fitCalibration, parseBenchJsonl, unsafeEstimates } from "../../dist/src/memory/fit.js";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const deviceMiB = option("--device-mib", 81559);
const margin = option("--margin", 0.05);
const file = args.find((a, i) => !a.startsWith("--") && !["--device-mib", "--margin"].includes(args[i - 1]));
if (!file) {
  console.error("usage: node bench/memory/fit-formula.mjs FILE.jsonl [--write] [--json]");
  process.exit(2);
}
const calibrationPath = resolve(import.meta.dirname, "../../src/memory/calibration.json");
const base = JSON.parse(readFileSync(calibrationPath, "utf8"));
let records;
try {
  records = parseBenchJsonl(readFileSync(file, "utf8"), file);
} catch (error) {
  console.error(`fit-formula: ${error.message}`);
  process.exit(2);
}
const result = fitCalibration(records, base);
const safety = unsafeEstimates(records, result.calibration, deviceMiB * 2 ** 20 * (1 - margin));

/** The commit that last changed the bench file, so the calibration names exactly what it was fitted on. */
function commitOf(path) {
  try {
    const dir = dirname(resolve(path));
    const hash = execFileSync("git", ["-C", dir, "log", "-1", "--format=%h", "--", resolve(path)], {
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["-C", dir, "status", "--porcelain", "--", resolve(path)], {
      encoding: "utf8",
    }).trim();
    return hash ? `commit ${hash}${dirty ? ", modified since" : ""}` : "not committed";
  } catch {
    return "not in git";
  }
}

const GiB = 2 ** 30;
const pct = (v) => (v === null ? "n/a" : `${v.toFixed(1)} %`);
const row = (c) =>
  `  ${c.model.padEnd(18)} ${String(c.batch).padStart(4)} x ${String(c.seqLen ?? c.imageSize).padEnd(5)} ${c.gradCheckpointing ? "ckpt" : "    "} ${c.task.padEnd(14)} truth ${(c.truthBytes / GiB).toFixed(2).padStart(6)} GiB  formula ${(c.estimateBytes / GiB).toFixed(2).padStart(6)} GiB  ${c.errorPct >= 0 ? "+" : ""}${c.errorPct.toFixed(1)} %`;

if (args.includes("--json"))
  console.log(JSON.stringify({ ...result, calibration: undefined, safety }, null, 1));
else {
  console.log(`bench file: ${file} (${commitOf(file)}); ${records.length} records`);
  console.log("fitted coefficients:");
  for (const f of result.fitted) console.log(`  ${f.name}: ${f.before} -> ${f.after}`);
  console.log(`fit cells (${result.fitCells.length}):`);
  result.fitCells.forEach((c) => console.log(row(c)));
  console.log(`holdout cells (${result.holdoutCells.length}):`);
  result.holdoutCells.forEach((c) => console.log(row(c)));
  console.log(
    `holdout |error|: median ${pct(result.medianAbsErrorPct)}, p95 ${pct(result.p95AbsErrorPct)} (target: median <= 10 %)`,
  );
  if (result.allocatorOverheadFraction !== null)
    console.log(
      `allocator reserve above allocated, largest: ${(result.allocatorOverheadFraction * 100).toFixed(1)} %`,
    );
  console.log(
    `out-of-memory cells the estimate called "fits" (${deviceMiB} MiB, ${margin * 100} % margin): ${safety.unsafe.length} of ${safety.oomCells}`,
  );
  for (const u of safety.unsafe)
    console.log(`  ${u.model} batch ${u.batch}: estimate ${(u.estimateTotalBytes / GiB).toFixed(2)} GiB`);
  const trainCells = [...result.fitCells, ...result.holdoutCells].filter((c) => c.task === "train").length;
  console.log(
    `parameter counts (train cells): ${trainCells - result.parameterCountMismatches.length} of ${trainCells} equal the bench's`,
  );
  for (const m of result.parameterCountMismatches)
    console.log(`  ${m.model}: bench ${m.bench}, formula ${m.formula}`);
  if (result.skipped.length) {
    console.log(`skipped (${result.skipped.length}):`);
    for (const s of result.skipped) console.log(`  ${s.model} batch ${s.batch}: ${s.reason}`);
  }
}

if (args.includes("--write")) {
  const out = result.calibration;
  const where = `${relative(resolve(import.meta.dirname, "../.."), resolve(file))} (${commitOf(file)})`;
  const fitNames = [...new Set(result.fitCells.map((c) => c.model))].join(", ");
  const fittedSource = `fitted by bench/memory/fit-formula.mjs on ${where}: ${result.fitCells.length} fit cells (${fitNames})`;
  if (result.fitted.some((f) => f.name.startsWith("activations.layerScale.")))
    out.activations.layerScale.source = fittedSource;
  if (result.fitted.some((f) => f.name === "activations.lossBytesPerTokenVocab"))
    out.activations.lossBytesPerTokenVocab.source = fittedSource;
  if (result.fitted.some((f) => f.name === "activations.loraLayerFactor"))
    out.activations.loraLayerFactor.source = fittedSource;
  if (result.fitted.some((f) => f.name === "activations.cnnBytesPerFeatureElement"))
    out.activations.cnnBytesPerFeatureElement.source = fittedSource;
  if (result.allocatorOverheadFraction !== null) {
    out.allocatorOverheadFraction = {
      value: Math.ceil(result.allocatorOverheadFraction * 100) / 100,
      source: `largest reserved/allocated - 1 over the cells of ${where} that report reserved, rounded up to 1 %`,
    };
  }
  const round = (v) => (v === null ? null : Math.round(v * 10) / 10);
  out.accuracy = {
    medianAbsErrorPct: round(result.medianAbsErrorPct),
    p95AbsErrorPct: round(result.p95AbsErrorPct),
    cells: result.holdoutCells.length,
    source: `held-out cells of ${where}, peak allocated vs torch.cuda.max_memory_allocated(); fitted on the other ${result.fitCells.length}`,
  };
  writeFileSync(calibrationPath, JSON.stringify(out, null, 2) + "\n");
  console.log(`wrote ${calibrationPath}`);
}
