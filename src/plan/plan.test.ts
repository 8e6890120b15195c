/** The planner's choices on the real targets of the seed documents, read from the packaged KB. */
import { containerOf } from "../plan/types.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKnowledgeBase } from "../kb/index.js";
import { readProject } from "../gather/project.js";
import { makePlan } from "./index.js";
import { targetFromName } from "./target.js";
import type { InitOptions, Plan } from "./types.js";
import { initOptions } from "../../test/support/init-options.js";

const kb = loadKnowledgeBase();

function plan(requirements: string, gpu: string, driver: string, strategy: InitOptions["strategy"]): Plan {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-plan-"));
  writeFileSync(join(dir, "requirements.txt"), requirements);
  const target = targetFromName(kb, { gpu, driver, cpuArch: null, flag: `--target ${gpu}` });
  return makePlan(kb, readProject(dir), target, initOptions({ strategy }));
}

function decision(result: Plan, topic: string): string {
  const found = result.decisions.find((d) => d.topic === topic);
  assert.ok(found, `no "${topic}" decision in ${result.decisions.map((d) => d.topic).join(", ")}`);
  return `${found.choice} | ${found.reason}`;
}

test("DGX Spark on driver 580: the image its driver runs natively beats a newer minor-compat one", () => {
  const result = plan("transformers\n", "dgx-spark", "580", "container");
  // 25.11 (CUDA 13.0) runs natively on 580; 25.12 (CUDA 13.1) only under minor-version compatibility.
  assert.equal(containerOf(result)?.image.tag, "25.11");
  assert.match(decision(result, "base image"), /25\.12: .*only under minor-version compatibility/);
  // With the CUDA 13.1 driver, the newest image that covers 12.1 on aarch64 and runs natively wins.
  assert.equal(
    containerOf(plan("transformers\n", "dgx-spark", "590.44.01", "container"))?.image.tag,
    "26.02",
  );
});

test("RTX 5070 Ti on driver 580: a container on 25.11; on 570 the newest image that runs is too old and auto says why", () => {
  // 25.11: the newest image whose torch arch list has sm_120 and whose CUDA (13.0) 580 runs natively.
  assert.equal(containerOf(plan("torchvision\n", "rtx-5070-ti", "580", "container"))?.image.tag, "25.11");
  const auto = plan("torchvision\n", "rtx-5070-ti", "570", "auto");
  assert.equal(auto.strategy, "native");
  assert.match(decision(auto, "strategy"), /25\.03, .*\d+ minor releases behind the native torch 2\.\d+/);
});

test("source builds follow the KB verdict for GPU and platform: xformers on GB10 (aarch64) but not on an RTX 5070 Ti", () => {
  const spark = plan("xformers\n", "dgx-spark", "580", "native");
  assert.deepEqual(
    spark.sourceBuilds.map((b) => [b.name, b.archList]),
    [["xformers", "12.1"]],
  );
  assert.match(decision(spark, "build xformers"), /linux-aarch64/);
  assert.equal(plan("xformers\n", "rtx-5070-ti", "580", "native").sourceBuilds.length, 0);
});

test("auto on an H100 (captured on the device machine): an NGC image several minor releases behind loses to native", () => {
  const result = plan("torch\ntransformers\n", "h100", "580.159.04", "auto");
  assert.equal(result.strategy, "native");
  assert.match(
    decision(result, "strategy"),
    /25\.11, .*torch 2\.10\.0a0\+b558c986e8\.nv25\.11.*\d+ minor releases behind the native torch 2\.\d+/,
  );
  // Asked for, the container is planned on the newest image that runs natively on driver 580.
  assert.equal(containerOf(plan("torch\n", "h100", "580.159.04", "container"))?.image.tag, "25.11");
});
