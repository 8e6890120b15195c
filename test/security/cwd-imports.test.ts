/**
 * Nothing in the directory gpuprep runs from is imported by the interpreters it starts (issue 28,
 * high 1). A cloned project's `json.py` used to run under doctor: `python -` and `python -c` put
 * the current directory first on sys.path.
 *
 * The test plants, in the working directory, a module for every top-level module that any payload
 * imports (probe.py, torch_env.py, validate.py, memory.py, the transports' bootstrap and the
 * import-directory query, read with Python's own ast), plus sitecustomize and usercustomize. Each
 * planted module writes a marker file when imported. Then it runs every command that starts an
 * interpreter, from that directory, and asserts that no marker appeared.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";
import { needs, PYTHON3_TORCH } from "../support/needs.js";
import { pythonBootstrap } from "../../src/transports/node-frame.js";
import { CWD_IMPORT_GUARD } from "../../src/transports/python-guard.js";

const DEBIAN_PYTHON = "/usr/bin/python3";
const PAYLOADS = ["probe/probe.py", "probe/torch_env.py", "validate/validate.py", "memory/memory.py"].map(
  (path) => fileURLToPath(new URL(`../../src/${path}`, import.meta.url)),
);

/** Every top-level module name imported anywhere in these sources (nested imports included). */
function importedModules(sources: string[]): string[] {
  const script = [
    "import ast, json, sys",
    "names = set()",
    "for text in json.load(sys.stdin):",
    "    for node in ast.walk(ast.parse(text)):",
    "        if isinstance(node, ast.Import): names.update(a.name.split('.')[0] for a in node.names)",
    "        elif isinstance(node, ast.ImportFrom) and node.level == 0: names.add(node.module.split('.')[0])",
    "print(json.dumps(sorted(names)))",
  ].join("\n");
  const run = spawnSync(DEBIAN_PYTHON, ["-c", script], { input: JSON.stringify(sources), encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as string[];
}

function plantedDirectory(): { dir: string; modules: string[] } {
  const sources = PAYLOADS.map((path) => readFileSync(path, "utf8"));
  sources.push(pythonBootstrap("print(1)"), CWD_IMPORT_GUARD);
  const modules = [...importedModules(sources), "sitecustomize", "usercustomize"];
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-planted-"));
  for (const name of modules)
    writeFileSync(
      join(dir, `${name}.py`),
      `open(${JSON.stringify(join(dir, `PWNED-${name}`))}, "w").close()\n`,
    );
  writeFileSync(
    join(dir, "pyproject.toml"),
    '[project]\nname = "planted"\nversion = "0"\ndependencies = ["torch"]\n',
  );
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify({
      model_type: "gpt2",
      n_layer: 2,
      n_head: 2,
      n_embd: 64,
      vocab_size: 1000,
      n_positions: 128,
    }),
  );
  return { dir, modules };
}

function markers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("PWNED-"));
}

test("the planted list covers the modules the probe and payloads really import", () => {
  const { modules } = plantedDirectory();
  for (const name of ["json", "os", "subprocess", "re", "torch", "runpy", "zlib", "sysconfig"])
    assert.ok(modules.includes(name), `${name} in ${modules.join(",")}`);
});

const COMMANDS: [string, string[]][] = [
  ["doctor --fast", ["doctor", "--fast", "--json", "--python", DEBIAN_PYTHON]],
  ["doctor", ["doctor", "--json", "--python", DEBIAN_PYTHON]],
  ["scan --python", ["scan", "--python", DEBIAN_PYTHON, "--json"]],
  ["validate", ["validate", "--only", "checks", "--json", "--python", DEBIAN_PYTHON]],
  ["init (gathering)", ["init", "--dry-run"]],
  ["memory", ["memory", "--model", "config.json", "--batch", "1", "--json", "--python", DEBIAN_PYTHON]],
];

for (const [label, args] of COMMANDS) {
  test(`${label} imports nothing from the directory it runs in`, (t) => {
    if (needs(t, PYTHON3_TORCH)) return;
    const { dir } = plantedDirectory();
    const result = runCli(args, { cwd: dir, timeout: 300_000 });
    assert.notEqual(result.code, null, `${label} hung`);
    assert.deepEqual(
      markers(dir),
      [],
      `${label} (exit ${String(result.code)}): ${result.stderr.slice(-500)}`,
    );
  });
}
