/** The tables the planner reads besides compatibility: wheel Pythons, named systems, nvcc targets. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KnowledgeBase, describeWheelPythons, hasWheelFor } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import { asCapability } from "../../test/support/capability.js";

const data = loadPackagedData();
const kb = new KnowledgeBase(data);

test("numpy<2 has wheels up to Python 3.12 (numpy 1.26's build matrix), numpy 2.3.2+ up to 3.14", () => {
  const below2 = kb.wheelPythons("numpy", "<2", "linux-x86_64");
  assert.equal(below2.status, "known");
  assert.equal(below2.releases.at(-1), "1.26.5");
  assert.equal(below2.pythons.at(-1), "3.12");
  assert.equal(hasWheelFor(below2, "3.13"), false);
  assert.equal(describeWheelPythons(below2), "3.8-3.12");
  assert.deepEqual(kb.wheelPythons("numpy", "==1.26.4", "linux-aarch64").pythons, [
    "3.9",
    "3.10",
    "3.11",
    "3.12",
  ]);
  assert.equal(hasWheelFor(kb.wheelPythons("numpy", ">=2.3.2", "linux-x86_64"), "3.14"), true);
  assert.equal(hasWheelFor(kb.wheelPythons("numpy", "==2.3.0", "linux-x86_64"), "3.14"), false);
  // 1.24 was read for x86_64 only: on aarch64 the table has nothing for that release.
  assert.equal(kb.wheelPythons("numpy", "==1.24.4", "linux-aarch64").status, "not-in-table");
  assert.equal(kb.wheelPythons("numpy", "==1.21.0", "linux-x86_64").status, "not-in-table");
  assert.equal(kb.wheelPythons("scipy", "", "linux-x86_64").status, "absent");
});

test("one wheel for every Python: xformers 0.0.35 (py39-none), bitsandbytes 0.50.1 (py3-none, requires-python >=3.10)", () => {
  const xformers = kb.wheelPythons("xformers", "==0.0.35", "linux-x86_64");
  assert.equal(xformers.anyPythonFrom, "3.9");
  assert.equal(hasWheelFor(xformers, "3.14"), true);
  assert.equal(hasWheelFor(xformers, "3.8"), false);
  assert.equal(kb.wheelPythons("xformers", "", "linux-aarch64").status, "absent");
  const bnb = kb.wheelPythons("bitsandbytes", "", "linux-aarch64");
  assert.equal(hasWheelFor(bnb, "3.10"), true);
  assert.equal(hasWheelFor(bnb, "3.9"), false);
});

test("named systems: DGX Spark ships driver 580.82.09 (NVIDIA's playbook capture); Thor's driver is not sourced", () => {
  const spark = kb.system("dgx-spark");
  assert.equal(spark?.gpu, "NVIDIA GB10");
  assert.equal(spark?.driver, "580.82.09");
  assert.equal(kb.system("DGX Spark")?.name, "DGX Spark");
  const thor = kb.system("jetson-thor");
  assert.equal(thor?.gpu, "NVIDIA Thor");
  assert.equal(thor?.driver, null);
  assert.equal(thor?.cuda, "13.0");
  // A GPU name is not a system: GB10 alone says nothing about the software around it.
  assert.equal(kb.system("gb10"), null);
  assert.equal(kb.system("h100"), null);
});

test("the oldest CUDA whose nvcc compiles a capability, from the toolkits' target lists", () => {
  assert.equal(kb.oldestCudaCompiling(asCapability("12.1"))?.version, "12.9");
  assert.equal(kb.oldestCudaCompiling(asCapability("12.0"))?.version, "12.8");
  assert.equal(kb.oldestCudaCompiling(asCapability("11.0"))?.version, "13.0");
  assert.equal(kb.oldestCudaCompiling(asCapability("9.0"))?.version, "11.8");
  assert.equal(kb.oldestCudaCompiling(asCapability("10.7"))?.version, "13.4");
});

test("integrity: a system on an unknown GPU or below its CUDA's driver, a release in two rows", () => {
  const broken = structuredClone(data);
  broken.systems[0]!.gpu = "NVIDIA GB11";
  broken.systems[0]!.driver = "575.51.03";
  broken.wheelPythons.push({ ...structuredClone(broken.wheelPythons[2]!), pythons: ["3.13"] });
  broken.extensions.find((row) => row.name === "flash-attn")!.buildEnv!.source =
    "https://example.org/setup.py";
  const problems = findContradictions(broken);
  assert.ok(problems.some((p) => /system DGX Spark: GPU NVIDIA GB11 is not in the GPU table/.test(p)));
  assert.ok(
    problems.some((p) =>
      /system DGX Spark: driver 575\.51\.03 is older than CUDA 13\.0's 580\.65\.06/.test(p),
    ),
  );
  assert.ok(
    problems.some((p) => /wheel pythons: numpy 1\.26\.0 linux-x86_64 is in rows 3 and 11/.test(p)),
    problems.join("\n"),
  );
  assert.ok(
    problems.some((p) =>
      /flash-attn: its buildEnv source https:\/\/example\.org\/setup\.py is not among/.test(p),
    ),
  );
  assert.deepEqual(findContradictions(data), []);
});
