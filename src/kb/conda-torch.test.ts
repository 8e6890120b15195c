import { test } from "node:test";
import { asDriver } from "../../test/support/driver.js";
import assert from "node:assert/strict";
import { loadKnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import { asCapability } from "../../test/support/capability.js";

const kb = loadKnowledgeBase();

test("conda-forge torch 2.5.1 (CUDA 12.6, aarch64) runs on GB10 only through compute_90 PTX", () => {
  const build = kb
    .condaTorchBuilds("conda-forge", "linux-aarch64")
    .find((row) => row.versions.includes("2.5.1") && row.cuda === "12.6");
  assert.ok(build);
  // The recipe's "5.0;6.0;6.1;7.0;7.5;8.0;8.6;8.9;9.0+PTX", the list seed 000's user saw (sm_ entries).
  assert.deepEqual(build.archList, [
    "sm_50",
    "sm_60",
    "sm_61",
    "sm_70",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_89",
    "sm_90",
    "compute_90",
  ]);
  const verdict = kb.judgeCondaTorchBuild(build, asCapability("12.1"), asDriver("580.95.05"));
  assert.equal(verdict.runs, "ptx-jit");
  assert.deepEqual(verdict.via, ["compute_90"]);
  assert.equal(kb.judgeCondaTorchBuild(build, asCapability("9.0"), asDriver("580.95.05")).runs, "sass");
});

test("the best conda-forge builds for GB10 carry sm_120 SASS; __cuda 12 excludes the CUDA 13 builds", () => {
  const query = {
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver("580.95.05"),
    platform: "linux-aarch64" as const,
    channel: "conda-forge" as const,
  };
  const [best] = kb.condaTorchBuildsFor(query);
  assert.ok(best);
  assert.equal(best.runs, "sass");
  assert.equal(best.build.torch, "2.13");
  assert.equal(best.build.cuda, "13.0");
  assert.deepEqual(best.via, ["sm_120"]);
  const cuda12 = kb.condaTorchBuildsFor({ ...query, maxCuda: "12.0" });
  assert.ok(cuda12.length > 0 && cuda12.every((v) => v.build.cuda?.startsWith("12.")));
  assert.equal(cuda12[0]?.build.cuda, "12.9");
  // A driver too old for CUDA 13 (and 12.9's GA driver) still runs 12.9 under minor-version compatibility.
  const old = kb.condaTorchBuildsFor({ ...query, driverVersion: asDriver("550.54.14") });
  assert.ok(old.every((v) => v.build.cuda !== "13.0"));
});

test("the pytorch channel: x86_64 only, nothing after 2.5, no code for Blackwell", () => {
  assert.deepEqual(kb.condaTorchBuilds("pytorch", "linux-aarch64"), []);
  const rows = kb.condaTorchBuilds("pytorch", "linux-x86_64");
  assert.deepEqual([...new Set(rows.map((r) => r.torch))], ["2.5", "2.4", "2.3", "2.2"]);
  assert.deepEqual(
    kb.condaTorchBuildsFor({
      computeCapability: asCapability("12.0"),
      driverVersion: asDriver("580.95.05"),
      platform: "linux-x86_64",
      channel: "pytorch",
    }),
    [],
  );
});

test("conda rows that contradict the toolkit table or their series are refused", () => {
  const broken = structuredClone(loadPackagedData());
  const row = broken.condaTorchBuilds.find((r) => r.channel === "conda-forge" && r.torch === "2.6")!;
  row.archList.push("sm_100");
  row.versions.push("2.7.0");
  broken.condaTorchBuilds.push({ ...structuredClone(row), archList: [] });
  broken.condaTorchBuilds.push({
    ...structuredClone(row),
    channel: "pytorch",
    platform: "linux-aarch64",
    archList: [],
  });
  const problems = findContradictions(broken);
  assert.ok(
    problems.some((p) => /sm_100 cannot be compiled by CUDA 12\.6/.test(p)),
    problems.join("\n"),
  );
  assert.ok(problems.some((p) => /version 2\.7\.0 is not of 2\.6/.test(p)));
  assert.ok(problems.some((p) => /version 2\.6\.0 is listed twice/.test(p)));
  assert.ok(problems.some((p) => /pytorch channel publishes no CUDA builds for linux-aarch64/.test(p)));
});

test("PyPI's aarch64 wheel is the CPU build up to 2.10 and cu130 from 2.11", () => {
  const defaults = kb.data.torchBuilds
    .filter((r) => r.platform === "linux-aarch64" && r.pypiDefault)
    .map((r) => `${r.torch} ${r.variant}`);
  assert.deepEqual(defaults, [
    "2.4 cpu",
    "2.5 cpu",
    "2.6 cpu",
    "2.7 cpu",
    "2.8 cpu",
    "2.9 cpu",
    "2.10 cpu",
    "2.11 cu130",
  ]);
});
