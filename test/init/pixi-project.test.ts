/** `gpuprep init` in a pixi project (seed 000): the CLI finds the project and says what it does with pixi.toml. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listFiles, repoRoot, runInit } from "./helpers.js";

test("init --target dgx-spark in a pixi-only project: a native plan with a torch for 12.1, the pin and the pixi note", () => {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-init-pixi-")), "virnucpro");
  cpSync(join(repoRoot, "test/fixtures/projects/pixi-gb10-conda-forge"), dir, { recursive: true });
  const result = runInit(["--project", dir, "--target", "dgx-spark", "--driver", "580.95.05", "--dry-run"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /→ native/);
  assert.match(
    result.stdout,
    /torch: torch 2\.\d+\.\* from https:\/\/download\.pytorch\.org\/whl\/cu\d+ \(cu\d+, linux-aarch64\)/,
  );
  assert.match(result.stdout, /why: sm_120 SASS runs natively on compute capability 12\.1/);
  assert.match(
    result.stdout,
    /pytorch = "2\.5\.1" \(pixi\.toml:17\): no torch build of that release runs on NVIDIA GB10; the nearest that runs is 2\.9.*pixi\.toml:17: pytorch = "2\.5\.1" {2}-> {2}pytorch = "2\.9\.\*"/,
  );
  assert.match(
    result.stdout,
    /pixi\.toml: pytorch -> torch \(conda name -> PyPI name\); the plan does not use pixi itself/,
  );
  assert.deepEqual(listFiles(dir), ["pixi.toml"], "dry run");
});
