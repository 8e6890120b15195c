/**
 * docs/library.md's examples run, and say what the CLI says (issue 23 item 4). Each ```js block is
 * saved as a module in a temporary directory whose node_modules/gpuprep links to this checkout, so
 * `import ... from "gpuprep"` resolves through package.json's "exports" to dist/src/index.js as
 * after `npm install gpuprep`; it runs beside the fixture its text names (a real capture, a project,
 * an nvcc-built library), and what it prints is held against the same question asked of the CLI
 * with --json. A page that falls behind the library, or a library that parts from its command, fails.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { runCli } from "./support/cli.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = join(ROOT, "test", "fixtures");
/** The command cores src/index.ts exports, each with a section and an example in docs/library.md. */
const CORES = ["diagnose", "makePlan", "generateFiles", "scanPaths", "estimateMemory", "runFleet"];

/** The first ```js block under each `## name` heading of the page. */
function examples(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const section of markdown.split(/^## /m).slice(1)) {
    const name = section.slice(0, section.indexOf("\n")).trim();
    const code = /^```js\n([\s\S]*?)^```/m.exec(section);
    if (code) found.set(name, code[1]!);
  }
  return found;
}

const EXAMPLES = examples(readFileSync(join(ROOT, "docs", "library.md"), "utf8"));

/** A directory where "gpuprep" is this checkout, with `files` (destination: fixture path) copied in. */
function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-library-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules", "gpuprep"), "dir");
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(join(dir, to, ".."), { recursive: true });
    cpSync(join(FIXTURES, from), join(dir, to), { recursive: true });
  }
  return dir;
}

/** The page's example for `name`, run with node in `dir`: its stdout lines (a failure shows stderr). */
function runExample(name: string, dir: string): string[] {
  const code = EXAMPLES.get(name);
  assert.ok(code, `docs/library.md has no js example under "## ${name}"`);
  writeFileSync(join(dir, "example.mjs"), code);
  const run = spawnSync(process.execPath, ["example.mjs"], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, `the ${name} example failed:\n${run.stderr}`);
  return run.stdout.trimEnd().split("\n");
}

/** The CLI's --json document for `args`, run in `dir`, with the exit codes it may give. */
function cliJson(args: string[], dir: string, codes = [0, 1]) {
  const run = runCli([...args, "--json"], { cwd: dir });
  assert.ok(codes.includes(run.code ?? -1), `gpuprep ${args.join(" ")}: exit ${run.code}\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

function inWorkspace(files: Record<string, string>, body: (dir: string) => void): void {
  const dir = workspace(files);
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("docs/library.md has one example for each command core, and the package exports each", async () => {
  assert.deepEqual(
    CORES.filter((name) => !EXAMPLES.has(name)),
    [],
    "a core without its section and example",
  );
  const library = (await import(new URL("../src/index.js", import.meta.url).href)) as Record<string, unknown>;
  assert.deepEqual(
    CORES.filter((name) => typeof library[name] !== "function"),
    [],
    "a core src/index.ts does not export",
  );
});

test("every example type-checks against the package's declarations (strict, as a TypeScript user gets them)", () => {
  inWorkspace({}, (dir) => {
    // @types/node for node:fs and process, as a user's project has it.
    symlinkSync(join(ROOT, "node_modules", "@types"), join(dir, "node_modules", "@types"), "dir");
    const files = [...EXAMPLES].map(([name, code]) => {
      const file = join(dir, `${name}.mjs`);
      writeFileSync(file, code);
      return file;
    });
    const program = ts.createProgram(files, {
      allowJs: true,
      checkJs: true,
      noEmit: true,
      strict: true,
      noImplicitAny: false, // plain JavaScript: an unannotated parameter is what a reader writes
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ["node"],
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? d.file.fileName.slice(dir.length + 1) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      );
    assert.deepEqual(problems, []);
  });
});

const SM80_ONLY = "facts/h100-extension-sm80-only.json"; // an H100 whose extension has sm_80 code only

test("diagnose: the example's findings are doctor's, in doctor's order", () => {
  inWorkspace({ "facts.json": SM80_ONLY }, (dir) => {
    const lines = runExample("diagnose", dir);
    const doctor = cliJson(["doctor", "--from", "facts.json"], dir);
    const expected = (doctor.findings as { severity: string; ruleId: string; title: string }[]).map(
      (f) => `${f.severity} ${f.ruleId}: ${f.title}`,
    );
    assert.ok(
      expected.some((line) => line.startsWith("error extension-arch-missing")),
      expected.join("\n"),
    );
    assert.deepEqual(lines, expected);
  });
});

test("the README's library example prints doctor's findings", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const code = /^## As a library\n[\s\S]*?^```js\n([\s\S]*?)^```/m.exec(readme)?.[1];
  assert.ok(code, "README.md has a js example under ## As a library");
  inWorkspace({ "facts.json": SM80_ONLY }, (dir) => {
    writeFileSync(join(dir, "example.mjs"), code);
    const run = spawnSync(process.execPath, ["example.mjs"], { cwd: dir, encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const doctor = cliJson(["doctor", "--from", "facts.json"], dir);
    assert.deepEqual(
      run.stdout.trimEnd().split("\n"),
      (doctor.findings as { severity: string; ruleId: string; title: string }[]).map(
        (f) => `${f.severity} ${f.ruleId} ${f.title}`,
      ),
    );
  });
});

const PROJECT = { "requirements.txt": "projects/requirements-cu126-pin/requirements.txt" };
const INIT_ARGS = ["init", "--target", "dgx-spark", "--strategy", "container", "--dry-run"];

test("makePlan: the example's plan is init's for the same project and target", () => {
  inWorkspace(PROJECT, (dir) => {
    const [head, ...decisions] = runExample("makePlan", dir);
    const { plan } = cliJson(INIT_ARGS, dir, [0]);
    assert.equal(head, `container: ${plan.container.ref}`);
    assert.deepEqual(
      decisions,
      (plan.decisions as { topic: string; choice: string }[]).map((d) => `${d.topic}: ${d.choice}`),
    );
  });
});

test("generateFiles: the example's files are those init writes, in its order", () => {
  inWorkspace(PROJECT, (dir) => {
    const paths = runExample("generateFiles", dir).map((line) => line.slice(0, line.indexOf(": ")));
    const init = cliJson(INIT_ARGS, dir, [0]);
    assert.ok(paths.includes("Dockerfile"), paths.join("\n"));
    assert.deepEqual(
      paths,
      (init.files as { path: string }[]).map((f) => f.path),
    );
  });
});

test("scanPaths: the example's coverage and verdict are scan's for the same file and GPU", () => {
  inWorkspace({ "libkernels.so": "fatbin/sm_80.so" }, (dir) => {
    const lines = runExample("scanPaths", dir);
    const scan = cliJson(["scan", "libkernels.so", "--gpu", "sm_120"], dir);
    const expected = (scan.libraries as { path: string; sass: string[]; verdict: { how: string } }[]).map(
      (l) => `${l.path}: SASS ${l.sass.join(" ")}, verdict ${l.verdict.how}`,
    );
    assert.deepEqual(expected, ["libkernels.so: SASS sm_80, verdict none"]);
    assert.deepEqual(lines, expected);
  });
});

test("estimateMemory: the example's verdict is memory's with the same model, work and target", () => {
  // A two-layer Llama config (test/fixtures/validate/models/tiny-llama): the formula tier reads it alone.
  inWorkspace({ "config.json": "validate/models/tiny-llama/config.json" }, (dir) => {
    const lines = runExample("estimateMemory", dir);
    const memory = cliJson(
      [
        "memory",
        "--model",
        "config.json",
        "--target",
        "H100 SXM",
        "--tier",
        "formula",
        "--batch",
        "8",
        "--amp",
        "bf16",
        "--seq-len",
        "2048",
      ],
      dir,
    );
    const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
    assert.deepEqual(lines, [
      `batch 8 ${memory.verdict.fits ? "fits" : "does not fit"} on ${memory.device.name}`,
      `headroom ${gib(memory.verdict.headroomBytes)} GiB; largest batch ${memory.verdict.maxBatch}`,
    ]);
  });
});

test("runFleet: the example's summary and findings are fleet doctor's over the same snapshots", () => {
  const nodes = { "nodes/node1.json": "facts/h100-healthy.json", "nodes/node2.json": SM80_ONLY };
  inWorkspace(nodes, (dir) => {
    const [head, ...findings] = runExample("runFleet", dir);
    const fleet = cliJson(["fleet", "doctor", "--from", "nodes"], dir);
    const { summary } = fleet;
    assert.equal(head, `${summary.nodes} nodes in ${summary.groups} groups, exit ${summary.exitCode}`);
    const merged = [...fleet.fleetFindings, ...fleet.nodeFindings] as {
      severity: string;
      ruleId: string;
      nodes: string[];
    }[];
    assert.ok(merged.length > 1, "two differing nodes give drift findings");
    assert.deepEqual(
      findings,
      merged.map((f) => `${f.severity} ${f.ruleId}: ${f.nodes.join(", ")}`),
    );
  });
});
