/**
 * issue 17: a value the knowledge base does not have prints as "not sourced", never as "?". Rows
 * covering every combination of missing fields (and every torch release) are shown through the
 * built CLI and checked, and rows known to lack a value must say "not sourced" where it would be.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { CLI } from "../support/cli.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { majorMinor } from "../../src/util/version.js";

const run = promisify(execFile);
const kb = loadKnowledgeBase();

/** A "?" standing for a value: alone, before "+" / ".x", or after "==" (a "?" inside a URL is not one). */
const QUESTION_MARK_VALUE = /(^|[\s(:=])\?($|[\s+.,;)x])/m;

async function showAll(args: string[][]): Promise<Map<string, string>> {
  const shown = new Map<string, string>();
  const queue = [...args];
  // Two at a time: the machine's cores are shared.
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { stdout } = await run(process.execPath, [CLI, "kb", ...next], {
        env: { ...process.env, NO_COLOR: "1" },
      });
      shown.set(next.join(" "), stdout);
    }
  };
  await Promise.all([worker(), worker()]);
  return shown;
}

/** Which fields of a row (and of its objects, one level down) are missing: null or an empty list. */
function missingPattern(row: object): string {
  const missing: string[] = [];
  for (const [key, value] of Object.entries(row)) {
    if (value === null || (Array.isArray(value) && value.length === 0)) missing.push(key);
    else if (typeof value === "object" && !Array.isArray(value))
      for (const [inner, v] of Object.entries(value as object))
        if (v === null || (Array.isArray(v) && v.length === 0)) missing.push(`${key}.${inner}`);
  }
  return missing.join(",");
}

/** One row for each distinct set of missing fields: every way a row can lack values, shown once. */
function onePerPattern<T extends object>(rows: T[]): T[] {
  const seen = new Map<string, T>();
  for (const row of rows) if (!seen.has(missingPattern(row))) seen.set(missingPattern(row), row);
  return [...seen.values()];
}

test("no KB value prints as '?' in any kb topic's text (one row per set of missing fields)", async () => {
  const topics = [
    ...onePerPattern(kb.data.gpus).map((row) => ["gpu", row.name]),
    ...onePerPattern(kb.data.ngcImages).map((row) => ["ngc", row.tag]),
    ["ngc"],
    ...onePerPattern(kb.data.cudaToolkits).map((row) => ["cuda", row.version]),
    ...[...new Set(kb.data.torchBuilds.map((row) => majorMinor(row.torch)))].map((v) => ["torch", v]),
    ...onePerPattern(kb.data.extensions).map((row) => ["ext", row.name]),
  ];
  const shown = await showAll(topics);
  assert.equal(shown.size, topics.length);
  for (const [topic, text] of shown) {
    const bad = text.split("\n").find((line) => QUESTION_MARK_VALUE.test(line));
    assert.equal(bad, undefined, `kb ${topic}: ${bad}`);
  }
});

test("rows known to lack a value say 'not sourced' where it would be", async () => {
  const gpu = kb.data.gpus.find((row) => row.peakTflops.bf16 === null);
  const cuda = kb.data.cudaToolkits.find((row) => !row.sassTargets);
  const torch = kb.data.torchBuilds.find((row) => row.numpyBuildMajor === null);
  const ngc = kb.data.ngcImages.find((row) => row.ubuntu === null);
  assert.ok(gpu && cuda && torch && ngc, "the knowledge base has rows with missing values to show");
  const shown = await showAll([
    ["gpu", gpu.name],
    ["cuda", cuda.version],
    ["torch", majorMinor(torch.torch)],
    ["ngc", ngc.tag],
  ]);
  assert.match(shown.get(`gpu ${gpu.name}`)!, /BF16 not sourced/);
  assert.match(shown.get(`cuda ${cuda.version}`)!, /compiles for +not sourced/);
  assert.match(shown.get(`torch ${majorMinor(torch.torch)}`)!, /numpy ABI not sourced/);
  assert.match(shown.get(`ngc ${ngc.tag}`)!, /Ubuntu +not sourced/);
});
