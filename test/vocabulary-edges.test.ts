/**
 * Domain values are parsed once, where they enter, and carried as types (issue 23, "typed
 * vocabulary"). A compute capability is text only at the edges listed here: a module elsewhere that
 * parses one is either a new edge (add it, with the reason) or a value that was formatted to text
 * and is being read back, which is what this guards against: take the ComputeCapability instead.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Where compute-capability text may become a value: file (under src/) -> calls allowed, and why. */
const CAPABILITY_EDGES: Record<string, { calls: number; why: string }> = {
  "kb/capability.ts": { calls: 1, why: "the knowledge base's rows, parsed once per text and cached" },
  "facts/capability.ts": { calls: 1, why: "nvidia-smi's compute_cap text in Facts" },
  "kb/queries/gpu.ts": {
    calls: 1,
    why: "a GPU name or capability as the user types it (kb gpu, --gpu, --target)",
  },
  "scan/device.ts": { calls: 1, why: "scan --gpu sm_120 / 12.0" },
};

/** The module that defines the type and its parser. */
const DEFINITION = "vocabulary/compute-capability.ts";

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

/** Calls of the parser in `text`, under its own name or an alias it was imported as. */
function parserCalls(text: string): number {
  const names = ["parseComputeCapability"];
  for (const match of text.matchAll(/\bparseComputeCapability\s+as\s+([A-Za-z_$][\w$]*)/g))
    names.push(match[1]!);
  let calls = 0;
  for (const name of names) calls += text.match(new RegExp(`(?<![\\w$.])${name}\\s*\\(`, "g"))?.length ?? 0;
  // `function parseComputeCapability(` is the definition, not a call.
  return calls - (text.match(/\bfunction\s+parseComputeCapability\s*\(/g)?.length ?? 0);
}

test("compute capability is parsed only at the edges: nowhere is a value formatted to text and read back", () => {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 50, `found only ${files.length} source files under ${SRC}`);
  const found: Record<string, number> = {};
  for (const file of files) {
    const path = relative(SRC, file).split("\\").join("/");
    if (path === DEFINITION) continue;
    const calls = parserCalls(readFileSync(file, "utf8"));
    if (calls > 0) found[path] = calls;
  }
  const unexpected = Object.entries(found)
    .filter(([path, calls]) => calls > (CAPABILITY_EDGES[path]?.calls ?? 0))
    .map(([path, calls]) => `src/${path}: ${calls} call(s) of parseComputeCapability`);
  assert.deepEqual(
    unexpected,
    [],
    "take a ComputeCapability from the caller (kb.capabilityOf(row) for KB rows, smiCapability for Facts)",
  );
  // An edge that no longer parses leaves the list: it only shrinks.
  const stale = Object.keys(CAPABILITY_EDGES).filter((path) => !(path in found));
  assert.deepEqual(stale, [], "remove these from CAPABILITY_EDGES");
});

test("the parser call counter sees plain, aliased and method-free calls, not the definition", () => {
  assert.equal(parserCalls('const cc = parseComputeCapability("9.0");'), 1);
  assert.equal(parserCalls('import { parseComputeCapability as p } from "x"; p("9.0"); p ("1.0");'), 2);
  assert.equal(parserCalls("export function parseComputeCapability(text: string) {}"), 0);
  assert.equal(parserCalls("kb.parseComputeCapability(x); formatComputeCapability(cc);"), 0);
});
