#!/usr/bin/env node
/**
 * The house as it is (issue 16): the import graph between src/ folders and the counts that show
 * whether the one-way flow holds, read from the sources of any checkout, so a before/after is
 * two runs of this script:
 *   node scripts/layer-graph.mjs [REPO_DIR]      (default: this checkout)
 * Counts (non-test .ts files under src/):
 * - renderers: files that define a render* function, inside src/report and outside it (src/generate
 *   renders the files it writes, not reports, and is not counted);
 * - stdout writers: files that call process.stdout.write or console.log themselves;
 * - spawn sites: files outside src/transports that start processes (node:child_process, or the
 *   spawn helpers of src/transports/spawn.ts);
 * - JSON envelopes: files that write a document's schemaVersion themselves (a zod schema's
 *   `schemaVersion: z.` is a reader, not a writer) instead of going through one envelope;
 * - torch-environment children: Python files that ask torch for its arch list.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";

const repo = resolve(process.argv[2] ?? ".");
const src = join(repo, "src");

function files(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else out.push(path);
  }
  return out;
}

const all = files(src);
const sources = all.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
const folderOf = (file) => {
  const rel = relative(src, file);
  return rel.includes("/") ? rel.split("/")[0] : "(root)";
};
const rel = (file) => relative(src, file);

/** A type annotation (`schemaVersion: number`) declares a field; it writes no document. */
const TYPE_WORDS = new Set(["number", "unknown", "string"]);
const edges = new Map();
const renderers = { report: [], elsewhere: [] };
const writers = [];
const spawnSites = [];
const envelopes = [];
for (const file of sources) {
  const text = readFileSync(file, "utf8");
  const from = folderOf(file);
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)/g,
  )) {
    const to = folderOf(resolve(dirname(file), match[1] ?? match[2]));
    if (to === from) continue;
    const key = `${from} -> ${to}`;
    edges.set(key, (edges.get(key) ?? 0) + 1);
  }
  // src/generate renders files (a Dockerfile, a compose file): that is its job, not a report's.
  if (from !== "generate" && /\bfunction\s+render\w*\s*\(|\bconst\s+render\w*\s*=/.test(text))
    (from === "report" ? renderers.report : renderers.elsewhere).push(rel(file));
  if (/process\.stdout\.write\(|console\.log\(/.test(text)) writers.push(rel(file));
  if (
    from !== "transports" &&
    (/from\s+"node:child_process"/.test(text) ||
      /import\s*{[^}]*\b(runCommand|runWithInput|spawnProcess)\b[^}]*}\s*from\s+"[^"]*spawn\.js"/.test(text))
  )
    spawnSites.push(rel(file));
  const written = [...text.matchAll(/\bschemaVersion\??\s*:\s*([^\s,;]+)/g)].map((m) => m[1]);
  if (written.some((value) => !value.startsWith("z.") && !TYPE_WORDS.has(value))) envelopes.push(rel(file));
}
const torchChildren = all
  .filter((f) => f.endsWith(".py") && /get_arch_list\(\)/.test(readFileSync(f, "utf8")))
  .map(rel);

const list = (items) => (items.length ? items.sort().join(", ") : "none");
console.log(`# layer graph of ${repo}\n`);
console.log("## imports between src/ folders (count of import statements)\n");
for (const [edge, count] of [...edges].sort()) console.log(`- ${edge} (${count})`);
console.log("\n## counts\n");
console.log(`- renderers in src/report: ${renderers.report.length}`);
console.log(`- renderers elsewhere: ${renderers.elsewhere.length} (${list(renderers.elsewhere)})`);
console.log(`- stdout writers: ${writers.length} (${list(writers)})`);
console.log(`- spawn sites outside src/transports: ${spawnSites.length} (${list(spawnSites)})`);
console.log(`- files writing schemaVersion themselves: ${envelopes.length} (${list(envelopes)})`);
console.log(
  `- torch-environment children (Python files asking get_arch_list): ${torchChildren.length} (${list(torchChildren)})`,
);
