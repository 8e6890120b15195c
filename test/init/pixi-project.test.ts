/** `gpuprep init` in a pixi project (seed 000): the CLI finds the project and says what it does with pixi.toml. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { needs, SHELLCHECK } from "../support/needs.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listFiles, repoRoot, runInit, unwrapped } from "./helpers.js";

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
    unwrapped(result.stdout),
    /pytorch = "2\.5\.1" \(pixi\.toml:17\): no torch build of that release runs on NVIDIA GB10; the nearest that runs is 2\.9.*pixi\.toml:17: pytorch = "2\.5\.1" {2}-> {2}pytorch = "2\.9\.\*"/,
  );
  assert.match(
    unwrapped(result.stdout),
    /pixi\.toml: pytorch -> torch \(conda name -> PyPI name\); natively the plan edits that file and installs with pixi/,
  );
  assert.deepEqual(listFiles(dir), ["pixi.toml"], "dry run");
});

test("a pixi project's native plan edits its pixi.toml (torch from the PyTorch index, the changed python pin) and runs pixi install; a pyproject project keeps uv", (t) => {
  if (needs(t, SHELLCHECK)) return;
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-init-pixi-")), "virnucpro");
  cpSync(join(repoRoot, "examples/seed-000-virnucpro-pixi"), dir, { recursive: true });
  const before = parse(readFileSync(join(dir, "pixi.toml"), "utf8")) as unknown as PixiToml;
  const result = runInit(["--project", dir, "--target", "dgx-spark", "--strategy", "native"]);
  assert.equal(result.code, 0, result.stderr);
  const after = parse(readFileSync(join(dir, "pixi.toml"), "utf8")) as unknown as PixiToml;
  assert.deepEqual(Object.keys(after["pypi-dependencies"] ?? {}), ["torch"]);
  assert.match(
    String(after["pypi-dependencies"]?.["torch"]?.index),
    /^https:\/\/download\.pytorch\.org\/whl\/cu13\d$/,
  );
  assert.equal(
    after.dependencies["pytorch"],
    undefined,
    "the conda torch with no sm_121 code is commented out",
  );
  assert.equal(after.dependencies["python"], "3.10.*", "the python pin no torch for 12.1 allows, changed");
  for (const [name, spec] of Object.entries(before.dependencies))
    if (name !== "pytorch" && name !== "python") assert.deepEqual(after.dependencies[name], spec, name);
  assert.ok(listFiles(dir).includes("scripts/setup-pixi.sh"));
  assert.ok(!listFiles(dir).includes("scripts/setup-native.sh"), "no uv venv beside the pixi one");
  const lint = spawnSync("shellcheck", [join(dir, "scripts/setup-pixi.sh")], { encoding: "utf8" });
  assert.equal(lint.status, 0, lint.stdout);
  // Silent case: a pyproject project natively is a uv venv, its pixi.toml (if any) untouched.
  const uv = join(mkdtempSync(join(tmpdir(), "gpuprep-init-uv-")), "p");
  cpSync(join(repoRoot, "examples/vision-training-rtx-5070-ti"), uv, { recursive: true });
  const native = runInit([
    "--project",
    uv,
    "--target",
    "rtx-5070-ti",
    "--driver",
    "580",
    "--strategy",
    "native",
  ]);
  assert.equal(native.code, 0, native.stderr);
  assert.ok(listFiles(uv).includes("scripts/setup-native.sh"));
});

interface PixiToml {
  dependencies: Record<string, unknown>;
  "pypi-dependencies"?: Record<string, { index?: string }>;
}
