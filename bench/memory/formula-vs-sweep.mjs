// The formula tier against the trace tier on every traced row of the registry sweep: the same work
// (AdamW, bf16 autocast over float32 weights, batch 2, 64 tokens or the config's image size), the
// formula's allocator peak against the trace's, per model type. Rows whose config the formula tier
// cannot read are counted apart. Run after `npm run build`:
//   node bench/memory/formula-vs-sweep.mjs docs/reports/memory-sweep-h100.jsonl [--json OUT]
import { readFileSync, writeFileSync } from "node:fs";
import { formulaEstimate } from "../../dist/src/memory/formula.js";
import { genericModelConfig } from "../../dist/src/memory/generic-config.js";
import { SUPPORTED_MODEL_TYPES, modelConfigFromJson } from "../../dist/src/memory/hf-config.js";

const [path, flag, out] = process.argv.slice(2);
const rows = readFileSync(path, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((r) => r.modelType && r.outcome === "traced" && r.config);
const work = {
  task: "train",
  amp: "bf16",
  dtype: "float32",
  optimizer: "adamw",
  gradCheckpointing: false,
  seqLen: 64,
  imageSize: null,
  evalStep: false,
  lora: null,
};
const results = [];
let unread = 0;
for (const row of rows) {
  let model;
  try {
    model = SUPPORTED_MODEL_TYPES.includes(row.modelType)
      ? modelConfigFromJson(row.config, row.modelType)
      : genericModelConfig(row.config, row.modelType, null, row.class);
    const e = formulaEstimate(
      model,
      {
        ...work,
        imageSize: model.structure.kind === "transformer" ? null : model.structure.imageSize,
        seqLen: model.structure.kind === "transformer" ? 64 : null,
      },
      2,
    );
    results.push({
      modelType: row.modelType,
      task: row.task,
      errorPct: (100 * (e.peakAllocatedBytes - row.peakAllocatedBytes)) / row.peakAllocatedBytes,
      paramsPct: (100 * (model.parameterCount - row.parameterCount)) / row.parameterCount,
    });
  } catch {
    unread++;
  }
}
const abs = results.map((r) => Math.abs(r.errorPct)).sort((a, b) => a - b);
const q = (p) => abs[Math.min(abs.length - 1, Math.round(p * (abs.length - 1)))];
const summary = {
  rows: rows.length,
  estimated: results.length,
  unread,
  medianAbsPct: q(0.5),
  p90AbsPct: q(0.9),
  within10: results.filter((r) => Math.abs(r.errorPct) <= 10).length,
  under: results.filter((r) => r.errorPct < 0).length,
};
console.log(JSON.stringify(summary));
for (const r of results.sort((a, b) => a.modelType.localeCompare(b.modelType)))
  console.log(
    `${r.modelType.padEnd(28)} ${r.task.padEnd(20)} peak ${r.errorPct.toFixed(1).padStart(7)} %  params ${r.paramsPct.toFixed(1).padStart(7)} %`,
  );
if (flag === "--json" && out) writeFileSync(out, JSON.stringify({ summary, results }, null, 1));
