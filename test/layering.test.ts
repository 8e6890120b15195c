/**
 * The layering of docs/DESIGN.md, checked on every import under src/: gather (through
 * transports) is the only way out to the world, everything after it is a function of Facts and
 * the knowledge base, and nothing below the CLI imports from it. A new edge that breaks this
 * fails here, naming the file and the import.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Which top-level folders of src/ each folder may import from (its own folder is always allowed). */
const ALLOWED: Record<string, string[]> = {
  root: ["util"],
  util: ["root"],
  facts: ["util", "root"],
  fatbin: ["facts", "util", "root"],
  kb: ["facts", "util", "root"],
  transports: ["util", "root"],
  gather: ["transports", "facts", "fatbin", "kb", "util", "root"],
  // What rules share (views over Facts, the Finding builder, install advice); never a rule itself.
  "rule-helpers": ["facts", "kb", "fatbin", "util", "root"],
  rules: ["rule-helpers", "facts", "kb", "fatbin", "util", "root"],
  // Runs the rules over Facts and merges findings of one root cause.
  diagnose: ["rules", "rule-helpers", "facts", "kb", "util", "root"],
  plan: ["facts", "kb", "util", "root"],
  generate: ["plan", "facts", "kb", "util", "root"],
  // Commands that run payloads of their own do so through a transport, next to gather.
  validate: ["transports", "gather", "facts", "kb", "util", "root"],
  memory: ["transports", "gather", "facts", "kb", "util", "root"],
  fleet: [
    "transports",
    "gather",
    "facts",
    "kb",
    "rules",
    "diagnose",
    "rule-helpers",
    "fatbin",
    "util",
    "root",
  ],
  report: [
    "facts",
    "kb",
    "rules",
    "diagnose",
    "rule-helpers",
    "plan",
    "generate",
    "validate",
    "memory",
    "fleet",
    "fatbin",
    "util",
    "root",
  ],
  cli: ["*"],
  // src/index.ts, the library's entry: anything below the CLI.
  library: [
    "root",
    "util",
    "facts",
    "fatbin",
    "kb",
    "transports",
    "gather",
    "rules",
    "diagnose",
    "rule-helpers",
    "plan",
    "generate",
    "validate",
    "memory",
    "fleet",
    "report",
  ],
};

/** Only transports start processes; each exception here is a known debt (issue 16), not a pattern. */
const CHILD_PROCESS_ALLOWED = new Set([
  "transports",
  "cli/scan.ts",
  "gather/binaries.ts",
  "validate/payload.ts",
]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

function layerOf(file: string): string {
  const rel = relative(SRC, file).replace(/\.js$/, ".ts");
  if (rel === "index.ts") return "library";
  return rel.includes("/") ? rel.split("/")[0]! : "root";
}

function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/g))
    specifiers.push(match[1]!);
  for (const match of text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) specifiers.push(match[1]!);
  return specifiers;
}

test("every import under src/ follows the layering in docs/DESIGN.md", () => {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 50, `found only ${files.length} source files under ${SRC}`);
  const broken: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    const allowed = ALLOWED[from];
    assert.ok(allowed, `src/${relative(SRC, file)}: folder "${from}" has no entry in ALLOWED; add one`);
    for (const specifier of importsOf(readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue;
      const to = layerOf(resolve(dirname(file), specifier));
      if (to === from || allowed.includes("*") || allowed.includes(to)) continue;
      broken.push(`src/${relative(SRC, file)} imports ${specifier} (${from} -> ${to})`);
    }
  }
  assert.deepEqual(broken, []);
});

test("only src/transports starts child processes (plus the listed debts)", () => {
  const broken: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (CHILD_PROCESS_ALLOWED.has(rel) || CHILD_PROCESS_ALLOWED.has(layerOf(file))) continue;
    if (/from\s+"node:child_process"|require\("child_process"\)/.test(readFileSync(file, "utf8")))
      broken.push(rel);
  }
  assert.deepEqual(broken, []);
});

test("the layering check sees a forbidden edge (it can fail)", () => {
  const text = 'import type { Style } from "../cli/output.js";\nimport { x } from "node:fs";';
  const specifiers = importsOf(text);
  assert.deepEqual(specifiers, ["../cli/output.js", "node:fs"]);
  const to = layerOf(resolve(join(SRC, "report"), specifiers[0]!));
  assert.equal(to, "cli");
  assert.ok(!ALLOWED.report!.includes(to));
});

/**
 * issue 16: one stdout writer. Commands write through src/report/terminal.ts (text sanitized,
 * documents as they are), so sanitizing, a closed pipe and the final newline are handled once.
 */
test("only report/terminal.ts writes to stdout (no process.stdout.write or console.log elsewhere)", () => {
  const writer = "report/terminal.ts";
  const offenders: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (rel === writer) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/process\.stdout\.write\(|console\.(log|info)\(/.test(line))
          offenders.push(`src/${rel}:${i + 1}`);
      });
  }
  assert.deepEqual(offenders, []);
  assert.match(readFileSync(join(SRC, writer), "utf8"), /process\.stdout\.write\(/, "the writer itself");
});
