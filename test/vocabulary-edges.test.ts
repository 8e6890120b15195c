/**
 * Domain values are parsed once, where they enter, and carried as types (issue 23, "typed
 * vocabulary"). A compute capability or a driver version is text only at the edges listed here: a
 * module elsewhere that parses one is either a new edge (add it, with the reason) or a value that
 * was formatted to text and is being read back, which is what this guards against: take the
 * ComputeCapability or DriverVersion instead.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./support/source-files.js";

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

/** Where driver-version text may become a value: file (under src/) -> calls allowed, and why. */
const DRIVER_EDGES: Record<string, { calls: number; why: string }> = {
  "kb/driver.ts": { calls: 1, why: "the knowledge base's driver floors, parsed once per text and cached" },
  "facts/driver.ts": { calls: 1, why: "nvidia-smi's driver_version text in Facts" },
  "plan/target.ts": { calls: 1, why: "--driver (or the driver setting) of init and doctor --target" },
  "cli/kb.ts": { calls: 1, why: "kb resolve --driver" },
  "fleet/rules/driver-drift.ts": { calls: 1, why: "the fleet fingerprint's driver text, one per group" },
  "fleet/reference.ts": {
    calls: 2,
    why: "an expected-values baseline's driver branch, and each node's driver",
  },
};

/** Where NGC image-tag text may become a value: file (under src/) -> calls allowed, and why. */
const IMAGE_TAG_EDGES: Record<string, { calls: number; why: string }> = {
  "kb/image-tag.ts": { calls: 1, why: "the knowledge base's NGC releases, parsed once per text and cached" },
  "kb/index.ts": { calls: 1, why: "an NGC tag or reference as the user types it (kb ngc TAG)" },
};

/** Calls of `parser` in `text`, under its own name or an alias it was imported as. */
function parserCalls(text: string, parser = "parseComputeCapability"): number {
  const names = [parser];
  for (const match of text.matchAll(new RegExp(`\\b${parser}\\s+as\\s+([A-Za-z_$][\\w$]*)`, "g")))
    names.push(match[1]!);
  let calls = 0;
  for (const name of names) calls += text.match(new RegExp(`(?<![\\w$.])${name}\\s*\\(`, "g"))?.length ?? 0;
  // `function parseComputeCapability(` is the definition, not a call.
  return calls - (text.match(new RegExp(`\\bfunction\\s+${parser}\\s*\\(`, "g"))?.length ?? 0);
}

/** src/ path -> source text of every non-test module but `definition`. */
function modulesBut(definition: string): Map<string, string> {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 50, `found only ${files.length} source files under ${SRC}`);
  const modules = new Map<string, string>();
  for (const file of files) {
    const path = relative(SRC, file).split("\\").join("/");
    if (path !== definition) modules.set(path, readFileSync(file, "utf8"));
  }
  return modules;
}

/** The calls of `parser` outside `edges` (or more than an edge is allowed), and edges that no longer parse. */
function edgeViolations(parser: string, definition: string, edges: Record<string, { calls: number }>) {
  const found: Record<string, number> = {};
  for (const [path, text] of modulesBut(definition)) {
    const calls = parserCalls(text, parser);
    if (calls > 0) found[path] = calls;
  }
  const unexpected = Object.entries(found)
    .filter(([path, calls]) => calls > (edges[path]?.calls ?? 0))
    .map(([path, calls]) => `src/${path}: ${calls} call(s) of ${parser}`);
  // An edge that no longer parses leaves the list: it only shrinks.
  const stale = Object.keys(edges).filter((path) => !(path in found));
  return { unexpected, stale };
}

test("compute capability is parsed only at the edges: nowhere is a value formatted to text and read back", () => {
  const { unexpected, stale } = edgeViolations(
    "parseComputeCapability",
    "vocabulary/compute-capability.ts",
    CAPABILITY_EDGES,
  );
  assert.deepEqual(
    unexpected,
    [],
    "take a ComputeCapability from the caller (kb.capabilityOf(row) for KB rows, smiCapability for Facts)",
  );
  assert.deepEqual(stale, [], "remove these from CAPABILITY_EDGES");
});

test("driver versions are parsed only at the edges, and compared as DriverVersion, never as text", () => {
  const { unexpected, stale } = edgeViolations(
    "parseDriverVersion",
    "vocabulary/driver-version.ts",
    DRIVER_EDGES,
  );
  assert.deepEqual(
    unexpected,
    [],
    "take a DriverVersion from the caller (rowDriver(text) for KB rows, smiDriver for Facts)",
  );
  assert.deepEqual(stale, [], "remove these from DRIVER_EDGES");
  // The text comparison they replace: compareVersions on anything named driver.
  const textCompared = [...modulesBut("")]
    .flatMap(([path, text]) =>
      text
        .split("\n")
        .map((line, i) => (/compareVersions\([^)]*driver/i.test(line) ? `src/${path}:${i + 1}` : "")),
    )
    .filter(Boolean);
  assert.deepEqual(textCompared, [], "compare drivers with compareDriverVersions");
});

test("NGC image tags are parsed only at the edges, and ordered as ImageTag, never as a version", () => {
  const { unexpected, stale } = edgeViolations("parseImageTag", "vocabulary/image-tag.ts", IMAGE_TAG_EDGES);
  assert.deepEqual(unexpected, [], "sort NGC rows with newestTagFirst (kb/image-tag.ts)");
  assert.deepEqual(stale, [], "remove these from IMAGE_TAG_EDGES");
  const textCompared = [...modulesBut("")]
    .flatMap(([path, text]) =>
      text
        .split("\n")
        .map((line, i) => (/compareVersions\([^)]*\btag\b/.test(line) ? `src/${path}:${i + 1}` : "")),
    )
    .filter(Boolean);
  assert.deepEqual(textCompared, [], "compare NGC tags with compareImageTags");
});

test("the parser call counter sees plain, aliased and method-free calls, not the definition", () => {
  assert.equal(parserCalls('const cc = parseComputeCapability("9.0");'), 1);
  assert.equal(parserCalls('import { parseComputeCapability as p } from "x"; p("9.0"); p ("1.0");'), 2);
  assert.equal(parserCalls("export function parseComputeCapability(text: string) {}"), 0);
  assert.equal(parserCalls("kb.parseComputeCapability(x); formatComputeCapability(cc);"), 0);
  assert.equal(
    parserCalls('parseDriverVersion("580"); parseComputeCapability("9.0")', "parseDriverVersion"),
    1,
  );
});
