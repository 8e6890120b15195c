import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { KnowledgeBaseDataError, loadPackagedData, parseTable, TABLES } from "./load.js";
import { findContradictions } from "./integrity.js";
import { torchBuildRowSchema } from "./schema.js";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const data = loadPackagedData();
const h100Build = () =>
  structuredClone(data.torchBuilds.find((row) => row.torch === "2.11" && row.variant === "cu130")!);

test("every packaged table passes its schema, with sources on every row", () => {
  for (const [name, rows] of Object.entries(data)) {
    if (name === "ngcImages" || name === "extensions") continue;
    assert.ok(rows.length > 0, `${name} has rows`);
  }
  assert.ok(data.gpus.length >= 30, "at least 30 GPUs");
  for (const rows of Object.values(data)) for (const row of rows) assert.ok(row.sources.length > 0);
});

test("the packaged data has no contradictions and its repository sources exist", () => {
  assert.deepEqual(findContradictions(data, repoRoot), []);
});

test("a row without a source is refused", () => {
  const row = { ...h100Build(), sources: [] };
  assert.throws(
    () => parseTable("torchBuilds", "t.json", torchBuildRowSchema, { table: "torchBuilds", rows: [row] }),
    (error) => {
      assert.ok(error instanceof KnowledgeBaseDataError);
      assert.match(error.message, /rows\.0\.sources: every row needs at least one source/);
      return true;
    },
  );
});

test("a schema violation names the file, row and field", () => {
  const json = JSON.parse(readFileSync(new URL(`./data/${TABLES.gpus.file}`, import.meta.url), "utf8"));
  json.rows[3].computeCapability = "nine";
  assert.throws(
    () => parseTable("gpus", "gpus.json", TABLES.gpus.schema, json),
    /gpus\.json: rows\.3\.computeCapability/,
  );
  const badUrl = { ...h100Build(), sources: [{ url: "somewhere" }] };
  assert.throws(
    () => parseTable("torchBuilds", "t.json", torchBuildRowSchema, { table: "torchBuilds", rows: [badUrl] }),
    /http\(s\) URL/,
  );
});

test("contradictions are found: an arch the CUDA cannot compile, a driver below its floor, two PyPI defaults", () => {
  const broken = structuredClone(data);
  // torch cu130 claiming Volta, which CUDA 13.0 removed
  broken.torchBuilds
    .find((row) => row.torch === "2.11" && row.variant === "cu130" && row.platform === "linux-x86_64")!
    .archList.push("sm_70");
  broken.cudaToolkits.find((row) => row.version === "12.8")!.minDriverLinux = "450.1";
  broken.torchBuilds.find(
    (row) => row.torch === "2.11" && row.variant === "cu128" && row.platform === "linux-x86_64",
  )!.pypiDefault = true;
  broken.gpus[0]!.peakTflops = { bf16: 1979, fp16: 1979, tf32: 494.5, fp32: 67 };
  const problems = findContradictions(broken);
  assert.ok(
    problems.some((line) => /sm_70 cannot be compiled by CUDA 13\.0/.test(line)),
    problems.join("\n"),
  );
  assert.ok(
    problems.some((line) => /CUDA 12\.8: GA driver 450\.1 is below its minor-compat floor/.test(line)),
  );
  assert.ok(problems.some((line) => /two PyPI defaults/.test(line)));
  assert.ok(problems.some((line) => /not 2:1 \(sparse figure\?\)/.test(line)));
});

test("a repository source that does not exist is reported", () => {
  const broken = structuredClone(data);
  broken.gpus[0]!.sources.push({ url: "docs/measurements/never-made.md" });
  assert.ok(findContradictions(broken, repoRoot).some((line) => /never-made\.md does not exist/.test(line)));
});

test("an nvidia-smi memory that does not fit the marketed size is reported (unit mix-up)", () => {
  const broken = structuredClone(data);
  const h100 = broken.gpus.find((row) => row.name === "NVIDIA H100 80GB HBM3")!;
  h100.nvidiaSmiMemoryMiB = 80; // GB typed into the MiB field
  const b200 = broken.gpus.find((row) => row.name === "NVIDIA B200")!;
  b200.nvidiaSmiMemoryMiB = Math.round((183359 * 1048576) / 1e6); // MiB converted to MB
  const problems = findContradictions(broken).join("\n");
  assert.match(problems, /GPU NVIDIA H100 80GB HBM3: nvidia-smi 80 MiB is 0 % of 80 GB/);
  assert.match(problems, /GPU NVIDIA B200: nvidia-smi 192266 MiB is 104 % of 180 GB/);
  assert.deepEqual(findContradictions(data), [], "the packaged values all fit");
});
