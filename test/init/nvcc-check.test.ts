/**
 * The nvcc check the generated setup and Dockerfile run before any source build, executed by
 * bash/sh against the real nvcc 13.0 of this machine: it passes where the plan needs CUDA 13.x and
 * stops with the reason where it needs 12.x. Skipped (with the reason) where no nvcc is installed:
 * CI has none (NVIDIA's toolkit is no Debian package); the GPU machine has one.
 */
import { nativeOf } from "../../src/plan/types.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { readProject } from "../../src/gather/project.js";
import { makePlan } from "../../src/plan/index.js";
import { targetFromName } from "../../src/plan/target.js";
import type { InitOptions, Plan } from "../../src/plan/types.js";
import { nvccCheckDockerfile, nvccCheckScript } from "../../src/generate/nvcc-check.js";
import { VERSION_AT_LEAST } from "../../src/generate/shell.js";
import { needs, NVCC } from "../support/needs.js";
import { initOptions } from "../support/init-options.js";

const kb = loadKnowledgeBase();
const nvcc = spawnSync("sh", ["-c", "command -v nvcc"], { encoding: "utf8" }).stdout.trim();

function plan(gpu: string, requirements: string, options: Partial<InitOptions> = {}): Plan {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-nvcc-"));
  writeFileSync(join(dir, "requirements.txt"), requirements);
  return makePlan(
    kb,
    readProject(dir),
    targetFromName(kb, { gpu, driver: "580", cpuArch: null, flag: "--target" }),
    initOptions({ strategy: "native", ...options }),
  );
}

function runScript(lines: string[], env: Record<string, string> = {}) {
  const script = ["set -euo pipefail", VERSION_AT_LEAST, ...lines].join("\n");
  return spawnSync("bash", ["-c", script], {
    encoding: "utf8",
    env: { ...process.env, CUDA_HOME: "", ...env },
  });
}

test("setup-native.sh: the nvcc check passes with CUDA 13.0 for a cu130 plan and stops a cu126 plan", (t) => {
  if (needs(t, NVCC)) return;
  const spark = nvccCheckScript(plan("dgx-spark", "torch\nxformers\n"));
  assert.ok(spark.length > 0);
  const ok = runScript(spark);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^nvcc: .*nvcc \(CUDA 13\.0\)$/m);

  // A V100 plan: torch cu126 (CUDA 13 dropped sm_70), so the build needs a 12.x nvcc.
  const v100 = plan("v100", "torch\nxformers\n", { buildFromSource: ["xformers"] });
  assert.equal(nativeOf(v100)?.build.variant, "cu126");
  const refused = runScript(nvccCheckScript(v100));
  assert.equal(refused.status, 1);
  assert.match(
    refused.stderr,
    /^error: .*nvcc is CUDA 13\.0; building xformers needs 12\.6 or a newer 12\.x$/m,
  );
});

test("setup-native.sh: nvcc is found through CUDA_HOME first, as torch's extension builder finds it", (t) => {
  const cudaHome = nvcc ? dirname(dirname(nvcc)) : "";
  if (needs(t, NVCC)) return;
  if (!existsSync(join(cudaHome, "bin", "nvcc"))) return t.skip(`${nvcc} is not under a CUDA_HOME/bin`);
  const result = runScript(nvccCheckScript(plan("dgx-spark", "torch\nxformers\n")), {
    CUDA_HOME: cudaHome,
    PATH: "/usr/bin:/bin",
  });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`nvcc: ${join(cudaHome, "bin", "nvcc").replace(/[.]/g, "\\.")} `));
});

test("Dockerfile build stage: the same check in sh stops before the build", (t) => {
  if (needs(t, NVCC)) return;
  const run = (p: Plan) => {
    const build = p.sourceBuilds.find((b) => b.needsNvcc)!;
    const lines = nvccCheckDockerfile(p, build).map((line) => line.replace(/\\$/, ""));
    return spawnSync("sh", ["-c", `${lines.join("\n")}\necho build starts`], { encoding: "utf8" });
  };
  const ok = run(plan("dgx-spark", "torch\nxformers\n"));
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /build starts/);
  const refused = run(plan("v100", "torch\n", { buildFromSource: ["xformers"] }));
  assert.equal(refused.status, 1);
  assert.doesNotMatch(refused.stdout, /build starts/);
  assert.match(refused.stderr, /error: nvcc is CUDA 13\.0; building xformers needs 12\.6 or a newer 12\.x/);
});
