/**
 * Every GPU row × precision without a peak names why in docs/kb-evidence/gpus.md ("Peaks not
 * sourced", issue 27 item 4): NVIDIA publishes none, not read, not taken, or a shared name. The
 * table is held to the data both ways: an empty cell it does not list fails, and so does a listed
 * cell that has since got a figure, so the reasons cannot go stale.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadPackagedData, type KnowledgeBaseData } from "./load.js";
import { PEAK_FORMATS } from "./schema.js";
import type { GpuRow } from "./types.js";

const evidenceFile = fileURLToPath(new URL("../../../docs/kb-evidence/gpus.md", import.meta.url));
const REASONS = ["NVIDIA publishes none", "not read", "not taken", "shared name"];

interface ListedGap {
  rows: string[];
  cells: string[];
  reason: string;
  why: string;
}

/** The "Peaks not sourced" table: rows and cells are lists ("; " and ", "), one reason each. */
function listedGaps(markdown: string): ListedGap[] {
  const section = markdown.split("### Peaks not sourced")[1]?.split(/\n#{2,3} /)[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| rows") && !line.startsWith("| ---"))
    .map((line) => {
      const [rows = "", cells = "", reason = "", why = ""] = line
        .slice(2, -2)
        .split(/ (?<!\\)\| /)
        .map((cell) => cell.trim());
      return { rows: rows.split("; "), cells: cells.split(", "), reason, why };
    });
}

/** 2:4 sparsity came with Ampere (8.0); FP32 and FP64 have no sparse rate on any part. */
function needsSparse(row: GpuRow, format: string): boolean {
  return format !== "fp32" && format !== "fp64" && Number(row.computeCapability.split(".")[0]) >= 8;
}

/** The cells of one row that carry no figure: "fp16" (none), "fp4 dense", "bf16 sparse". */
function gapCells(row: GpuRow): string[] {
  const cells: string[] = [];
  for (const format of PEAK_FORMATS) {
    const entry = row.peaks?.[format];
    if (entry === "not-on-arch") continue;
    if (!entry || (entry.dense === null && entry.sparse === null)) cells.push(format);
    else if (entry.dense === null) cells.push(`${format} dense`);
    else if (entry.sparse === null && needsSparse(row, format)) cells.push(`${format} sparse`);
  }
  return cells;
}

function coverageProblems(data: KnowledgeBaseData, listed: ListedGap[]): string[] {
  const problems: string[] = [];
  const reasonOf = new Map<string, ListedGap>();
  const rowNames = new Set(data.gpus.map((row) => row.name));
  for (const entry of listed) {
    if (!REASONS.includes(entry.reason))
      problems.push(`unknown reason "${entry.reason}" for ${entry.rows[0]}`);
    if (entry.why.length < 20) problems.push(`no explanation for ${entry.rows[0]} (${entry.reason})`);
    for (const name of entry.rows) {
      if (!rowNames.has(name)) problems.push(`"${name}" is not a GPU row`);
      for (const cell of entry.cells) reasonOf.set(`${name} ${cell}`, entry);
    }
  }
  const gaps = new Set(data.gpus.flatMap((row) => gapCells(row).map((cell) => `${row.name} ${cell}`)));
  for (const gap of gaps) if (!reasonOf.has(gap)) problems.push(`${gap}: not sourced and no reason listed`);
  for (const key of reasonOf.keys())
    if (!gaps.has(key)) problems.push(`${key}: listed as not sourced but the row has the figure`);
  return problems;
}

const data = loadPackagedData();
const listed = listedGaps(readFileSync(evidenceFile, "utf8"));
const gpu = (copy: KnowledgeBaseData, name: string) => copy.gpus.find((row) => row.name === name)!;

test("every peak that is not sourced names its reason in the evidence file", () => {
  assert.ok(listed.length >= 20, `${listed.length} reason rows parsed`);
  assert.deepEqual(coverageProblems(data, listed), []);
});

test("the RTX 50 cards issue 27 names have their 16-bit peaks; GB10 and the 5060 Ti say NVIDIA publishes none", () => {
  for (const name of ["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA GeForce RTX 5070"])
    for (const format of ["bf16", "fp16"] as const)
      assert.ok(gpu(data, name).peakTflops[format], `${name} ${format}`);
  const reasonFor = (row: string, cell: string) =>
    listed.find((entry) => entry.rows.includes(row) && entry.cells.includes(cell))?.reason;
  assert.equal(reasonFor("NVIDIA GB10", "bf16"), "NVIDIA publishes none");
  assert.equal(reasonFor("NVIDIA GeForce RTX 5060 Ti 16GB", "bf16"), "NVIDIA publishes none");
});

test("a new gap, a stale reason, an unknown reason and an unknown row are each reported", () => {
  const broken = structuredClone(data);
  delete gpu(broken, "NVIDIA GeForce RTX 5090").peaks!.tf32;
  gpu(broken, "NVIDIA GB10").peaks!.bf16 = { dense: 100, sparse: 200 };
  const edited = [
    ...listed,
    {
      rows: ["NVIDIA GeForce RTX 9090"],
      cells: ["fp16"],
      reason: "not read",
      why: "a row that does not exist",
    },
    { rows: ["NVIDIA L40S"], cells: ["fp64"], reason: "unknown", why: "x" },
  ];
  const problems = coverageProblems(broken, edited);
  const has = (pattern: RegExp) =>
    assert.ok(
      problems.some((line) => pattern.test(line)),
      problems.join("\n"),
    );
  has(/^NVIDIA GeForce RTX 5090 tf32: not sourced and no reason listed$/);
  has(/^NVIDIA GB10 bf16: listed as not sourced but the row has the figure$/);
  has(/^"NVIDIA GeForce RTX 9090" is not a GPU row$/);
  has(/^unknown reason "unknown" for NVIDIA L40S$/);
  has(/^no explanation for NVIDIA L40S/);
});

test("a dense figure alone leaves the sparse one to explain from Ampere on, not on Volta or Turing", () => {
  const broken = structuredClone(data);
  gpu(broken, "NVIDIA A100-SXM4-80GB").peaks!.bf16 = { dense: 312, sparse: null };
  const problems = coverageProblems(broken, listed);
  assert.ok(
    problems.includes("NVIDIA A100-SXM4-80GB bf16 sparse: not sourced and no reason listed"),
    problems.join("\n"),
  );
  // Turing has no 2:4 sparsity: the T4's dense-only FP16 and INT8 ask for no sparse figure.
  assert.deepEqual(gpu(broken, "Tesla T4").peaks!.int8, { dense: 130, sparse: null });
  assert.ok(!problems.some((line) => line.startsWith("Tesla T4")), problems.join("\n"));
});
