/**
 * The JSON contract (docs/json.md): schemas/ holds exactly what the generator writes from the zod
 * schemas, and what each command really prints under --json (run as a user runs it, on real
 * captures and nvcc-built binaries) passes the shipped schema for its id and version.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { JSON_DOCUMENTS, renderSchemaFiles, schemaFileName } from "../src/report/schemas/index.js";
import { SCHEMAS_DIR, schemaErrors } from "./support/json-schemas.js";
import { needs, PYTHON3_TORCH } from "./support/needs.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(REPO, "dist", "src", "cli", "main.js");
const FACTS = join(REPO, "test", "fixtures", "facts");
const work = mkdtempSync(join(tmpdir(), "gpuprep-json-schemas-"));
// An empty cache: no `kb update` overlay of this machine in the output.
const ENV = { ...process.env, XDG_CACHE_HOME: join(work, "cache"), NO_COLOR: "1" };

function gpuprep(args: string[], cwd = REPO) {
  const run = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: "utf8",
    env: ENV,
    timeout: 300_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Runs a command that prints one JSON document on stdout and checks it against its schema. */
function assertPrintsValid(
  args: string[],
  id: string,
  exitCodes = [0, 1],
  cwd = REPO,
): Record<string, unknown> {
  const run = gpuprep(args, cwd);
  assert.ok(
    exitCodes.includes(run.code ?? -1),
    `gpuprep ${args.join(" ")} exited ${run.code}: ${run.stderr}`,
  );
  const doc = JSON.parse(run.stdout) as Record<string, unknown>;
  assert.equal(doc["schema"], id, args.join(" "));
  assert.deepEqual(schemaErrors(doc), [], `gpuprep ${args.join(" ")}`);
  return doc;
}

test("schemas/ holds exactly what scripts/generate-json-schemas.mjs writes (run `npm run schemas`)", () => {
  const expected = renderSchemaFiles();
  const committed = readdirSync(SCHEMAS_DIR).filter((name) => name.endsWith(".schema.json"));
  assert.deepEqual(committed.sort(), [...expected.keys()].sort());
  for (const [name, text] of expected)
    assert.equal(readFileSync(join(SCHEMAS_DIR, name), "utf8"), text, `schemas/${name} is stale`);
  assert.equal(new Set(JSON_DOCUMENTS.map((d) => d.id)).size, JSON_DOCUMENTS.length, "an id listed twice");
});

type SchemaNode = {
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
  const?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
};

/** A node with a local $ref ("#/$defs/__schema0", as zod writes shared parts) replaced by its target. */
function resolved(node: SchemaNode, root: SchemaNode): SchemaNode {
  const name = node.$ref?.replace(/^#\/\$defs\//, "");
  return name ? (root.$defs?.[name] ?? {}) : node;
}

test("docs/json.md tabulates every document with its version and file", () => {
  const doc = readFileSync(join(REPO, "docs", "json.md"), "utf8");
  for (const document of JSON_DOCUMENTS) {
    const file = schemaFileName(document);
    const row = `| \`${document.id}\` | ${document.version} | [schemas/${file}](../schemas/${file}) |`;
    assert.ok(doc.includes(row), `docs/json.md lacks the row ${row}`);
  }
  const rows = doc.split("\n").filter((line) => /^\| `gpuprep\./.test(line));
  assert.equal(rows.length, JSON_DOCUMENTS.length, "docs/json.md lists a document the code does not print");
});

test("every document's envelope: schema and version as constants, tool {name, version}, optional kbOverlay", () => {
  const files = renderSchemaFiles();
  for (const name of JSON_DOCUMENTS.map(schemaFileName)) {
    const root = JSON.parse(files.get(name)!) as SchemaNode;
    // kb is one variant per topic; each carries the envelope, so look at the first.
    const variant = resolved(root.oneOf?.[0] ?? root.anyOf?.[0] ?? root, root);
    const field = (key: string) => resolved(variant.properties?.[key] ?? {}, root);
    assert.equal(typeof field("schema").const, "string", name);
    assert.equal(typeof field("schemaVersion").const, "number", name);
    assert.deepEqual(field("tool").required, ["name", "version"], `${name}: tool`);
    assert.ok(field("kbOverlay").properties?.["path"], `${name}: kbOverlay`);
    for (const key of ["schema", "schemaVersion", "tool"]) assert.ok(variant.required?.includes(key), name);
    assert.ok(
      !variant.required?.includes("kbOverlay"),
      `${name}: kbOverlay is only there when an overlay was used`,
    );
  }
});

test("doctor --json and the facts snapshot it saves pass their schemas (Debian's Python, live)", () => {
  const saved = join(work, "live.facts.json");
  assertPrintsValid(
    ["doctor", "--python", "/usr/bin/python3", "--fast", "--save", saved, "--json"],
    "gpuprep.doctor",
  );
  assert.deepEqual(schemaErrors(JSON.parse(readFileSync(saved, "utf8"))), [], "doctor --save");
});

test("doctor --from each real capture --json passes, the snapshot as this gpuprep reads it included", () => {
  // The captures themselves are not checked raw: some predate renames the reader still accepts
  // (sdpa.memEfficient, now efficient), and the schema describes what this version writes.
  const captures = readdirSync(FACTS).filter((n) => n.endsWith(".json"));
  assert.ok(captures.length > 20);
  for (const name of captures)
    assertPrintsValid(["doctor", "--from", join(FACTS, name), "--json"], "gpuprep.doctor");
});

test("scan --json over the nvcc-built fatbin fixtures passes, with a device and without one", () => {
  const fatbins = join(REPO, "test", "fixtures", "fatbin");
  const judged = assertPrintsValid(["scan", fatbins, "--gpu", "sm_90", "--json"], "gpuprep.scan");
  assert.ok((judged["libraries"] as unknown[]).length > 5);
  assertPrintsValid(["scan", fatbins, "--gpu", "12.0", "--json"], "gpuprep.scan");
});

test("kb --json passes for every topic that reads the packaged tables", () => {
  const topics = [
    ["gpu", "5070ti"],
    ["cuda", "12.8"],
    ["torch", "2.8"],
    ["ngc", "25.01"],
    ["ngc"],
    ["ext", "flash-attn"],
    ["resolve", "--gpu", "NVIDIA GB10", "--driver", "580.95.05"],
    ["resolve", "--gpu", "H100", "--driver", "535.104.05", "--python", "3.12"],
  ];
  for (const args of topics) {
    const doc = assertPrintsValid(["kb", ...args, "--json"], "gpuprep.kb", [0]);
    assert.equal(doc["topic"], args[0]);
  }
});

test("init --json passes: a dry run, a written container setup, a native one", () => {
  const project = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "requirements.txt"), "torch\nflash-attn\nnumpy<2\n");
    return dir;
  };
  const from = ["--from", join(FACTS, "h100-healthy.json")];
  const dry = assertPrintsValid(
    ["init", "--project", project("dry"), ...from, "--dry-run", "--json"],
    "gpuprep.init",
    [0],
  );
  assert.equal(dry["dryRun"], true);
  assertPrintsValid(
    ["init", "--project", project("container"), ...from, "--strategy", "container", "--json"],
    "gpuprep.init",
    [0],
  );
  assertPrintsValid(
    [
      "init",
      "--project",
      project("native"),
      "--target",
      "rtx-5090",
      "--driver",
      "580.95.05",
      "--strategy",
      "native",
      "--build-from-source",
      "flash-attn",
      "--json",
    ],
    "gpuprep.init",
    [0],
  );
});

test("validate --json (a saved run judged again) passes for every saved report", () => {
  const saved = join(REPO, "test", "fixtures", "validate");
  for (const name of readdirSync(saved).filter((n) => n.startsWith("report-") && n.endsWith(".json"))) {
    const doc = assertPrintsValid(["validate", "--from", join(saved, name), "--json"], "gpuprep.validate");
    assert.deepEqual(doc["tool"], {
      name: "gpuprep",
      version: JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version,
    });
  }
});

test("memory --json passes (Debian's torch 1.13: the scaled rule from a batch that ran)", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const fixtures = join(REPO, "test", "memory", "fixtures");
  const common = ["--python", "/usr/bin/python3", "--target", "H100 SXM", "--json"];
  assertPrintsValid(
    ["memory", "--model", "gpt2-tiny.json", "--current-batch", "8", "--current-memory", "30", ...common],
    "gpuprep.memory",
    [0],
    fixtures,
  );
});

test("fleet doctor --from DIR --json passes, garbage nodes included", () => {
  const dir = join(work, "fleet");
  mkdirSync(dir);
  for (const capture of ["h100-healthy", "h100-extension-sm80-only", "h200x2-healthy"])
    copyFileSync(join(FACTS, `${capture}.json`), join(dir, `${capture}.json`));
  writeFileSync(join(dir, "zz-noise.json"), "not json");
  const doc = assertPrintsValid(["fleet", "doctor", "--from", dir, "--json"], "gpuprep.fleet");
  assert.ok((doc["groups"] as unknown[]).length >= 2);
});

test("under --json an error is one gpuprep.error line on stderr that passes its schema", () => {
  for (const args of [
    ["doctor", "--from", join(work, "no-such-file.json"), "--json"],
    ["kb", "gpu", "Voodoo 2", "--json"],
    ["scan", "--frobnicate", "--json"],
  ]) {
    const run = gpuprep(args);
    assert.equal(run.code, 2, run.stderr);
    const line = run.stderr.trimEnd().split("\n").at(-1) ?? "";
    const doc = JSON.parse(line) as { schema: string; exitCode: number };
    assert.equal(doc.schema, "gpuprep.error");
    assert.equal(doc.exitCode, 2);
    assert.deepEqual(schemaErrors(doc), [], args.join(" "));
  }
});

test("a broken document fails: missing tool, tool as a string, a wrong field type, an undeclared field", () => {
  const good = assertPrintsValid(
    ["doctor", "--from", join(FACTS, "h100-healthy.json"), "--json"],
    "gpuprep.doctor",
  );
  const { tool: _tool, ...noTool } = good;
  assert.match(schemaErrors(noTool).join("\n"), /must have required property 'tool'/);
  assert.match(schemaErrors({ ...good, tool: "0.1.0" }).join("\n"), /\/tool must be object/);
  const summary = { ...(good["summary"] as object), errors: "none" };
  assert.match(schemaErrors({ ...good, summary }).join("\n"), /\/summary\/errors must be integer/);
  assert.match(
    schemaErrors({ ...good, schemaVersion: 99 }).join("\n"),
    /no shipped schema for gpuprep.doctor version 99/,
  );
  // Added fields are a compatible change: the shipped schema lets them through, the closed one
  // (what these tests hold the code to) names them.
  const extra = { ...good, somethingNew: 1 };
  assert.deepEqual(schemaErrors(extra, "shipped"), []);
  assert.match(schemaErrors(extra).join("\n"), /closed schema: .*must NOT have additional properties/);
});
