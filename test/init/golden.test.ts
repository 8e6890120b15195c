/**
 * The four example projects: `gpuprep init` with each one's gpuprep-args must produce exactly the
 * files under its expected/ (UPDATE_GOLDEN=1 rewrites them after a deliberate change; review the diff).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { copyExample, exampleArgs, exampleNames, examplesDir, listFiles, runInit } from "./helpers.js";

for (const name of exampleNames()) {
  test(`golden: examples/${name}`, () => {
    const dir = copyExample(name);
    const before = new Map(listFiles(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
    const result = runInit(["--project", dir, ...exampleArgs(name)]);
    assert.equal(result.code, 0, result.stderr);
    // Generated files, and project files init changed (pyproject.toml in native plans).
    const produced = listFiles(dir).filter(
      (f) => !f.startsWith(".gpuprep/") && readFileSync(join(dir, f), "utf8") !== before.get(f),
    );
    const expectedDir = join(examplesDir, name, "expected");
    if (process.env["UPDATE_GOLDEN"] === "1") {
      rmSync(expectedDir, { recursive: true, force: true });
      for (const f of produced) {
        mkdirSync(dirname(join(expectedDir, f)), { recursive: true });
        writeFileSync(join(expectedDir, f), readFileSync(join(dir, f)));
      }
    }
    assert.ok(existsSync(expectedDir), `examples/${name}/expected is missing: run with UPDATE_GOLDEN=1`);
    assert.deepEqual(produced.sort(), listFiles(expectedDir).sort(), "the set of files differs");
    for (const f of produced)
      assert.equal(
        readFileSync(join(dir, f), "utf8"),
        readFileSync(join(expectedDir, f), "utf8"),
        `${f} differs from expected/`,
      );
  });
}
