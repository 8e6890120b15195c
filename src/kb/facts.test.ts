/**
 * The facts of issue 22: per-GPU driver floors, GPU names that stood for several parts, torch 1.12 and
 * 1.13, CUDA 13.4, package requirements, and the driver a named target is planned for.
 */
import { asDriver } from "../../test/support/driver.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { KnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import { satisfies } from "../util/pep440.js";
import { asCapability } from "../../test/support/capability.js";

const data = loadPackagedData();
const kb = new KnowledgeBase(data);

test("minimumDriverFor: the GPU's own floor, else its architecture's (derived), none for a Jetson", () => {
  const rtx = kb.minimumDriverFor("RTX 5070 Ti")!;
  assert.equal(rtx.minDriverLinux, "570.26");
  assert.equal(rtx.basis, "architecture");
  assert.equal(rtx.derived, true);
  assert.match(rtx.reason, /supported from CUDA 12\.8, whose driver is 570\.26/);
  assert.ok(rtx.sources.some((source) => /cuda-toolkit-driver-and-architecture-matrix/.test(source.url)));
  const b200 = kb.minimumDriverFor("B200")!;
  assert.equal(b200.minDriverLinux, "570.133.20");
  assert.equal(b200.basis, "gpu-stated");
  const gb10 = kb.minimumDriverFor("NVIDIA GB10")!;
  assert.equal(gb10.minDriverLinux, "580");
  assert.equal(gb10.basis, "gpu-shipped");
  assert.equal(kb.minimumDriverFor("H100")?.minDriverLinux, "520.61.05");
  assert.equal(kb.minimumDriverFor("A100")?.minDriverLinux, "450.51.05");
  assert.equal(kb.minimumDriverFor("Orin")?.basis, "jetpack");
  assert.equal(kb.minimumDriverFor("Orin")?.minDriverLinux, null);
  assert.equal(kb.minimumDriverFor("rubin")?.minDriverLinux, "615");
  assert.equal(kb.minimumDriverFor("no such gpu"), null);
});

test("a driver below the GPU's floor is too old for it, whatever CUDA (and Volta ends at R580)", () => {
  const rtx = kb.gpu("RTX 5070 Ti")!;
  const old = kb.checkDriverForGpu(rtx, asDriver("535.104.05"));
  assert.equal(old.verdict, "too-old");
  assert.match(old.reason, /too old for NVIDIA GeForce RTX 5070 Ti: it needs 570\.26 or newer/);
  assert.equal(kb.driverTooOldForGpu(rtx, asDriver("535")), true);
  assert.equal(
    kb.checkDriverForGpu(rtx, asDriver("570")).verdict,
    "supported",
    "a bare branch is its newest patch",
  );
  const v100 = kb.gpu("Tesla V100-SXM2-32GB")!;
  assert.equal(kb.checkDriverForGpu(v100, asDriver("580.95.05")).verdict, "supported");
  assert.equal(kb.checkDriverForGpu(v100, asDriver("595.58.03")).verdict, "too-new");
  // The same floor turns torch wheels down: nothing runs on an RTX 5070 Ti with 535.
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: asCapability("12.0"),
    driverVersion: asDriver("535.104.05"),
    cpuArch: "x86_64",
  });
  assert.equal(evaluation.choices.length, 0);
  assert.ok(
    evaluation.rejected.some((entry) =>
      /older than 570\.26, the first driver that supports this GPU/.test(entry.reason),
    ),
  );
});

test("driverForTarget: the system's own driver, else the lowest its GPU needs", () => {
  const spark = kb.driverForTarget("dgx-spark");
  assert.equal(spark.driver, "580.82.09");
  assert.equal(spark.basis, "system-ships");
  const rtx = kb.driverForTarget("rtx 5070 ti");
  assert.equal(rtx.driver, "570.26");
  assert.equal(rtx.basis, "gpu-floor");
  const thor = kb.driverForTarget("jetson-thor");
  assert.equal(thor.driver, null);
  assert.match(thor.reason, /the driver Jetson AGX Thor ships is not sourced/);
  assert.equal(kb.driverForTarget("h100").driver, "520.61.05");
});

test("V100 16 GB and 32 GB are two rows; names several parts share answer with the smallest memory", () => {
  const v16 = kb.gpu("Tesla V100-SXM2-16GB")!;
  const v32 = kb.gpu("Tesla V100-SXM2-32GB")!;
  assert.equal(v16.memoryGB, 16);
  assert.equal(v16.nvidiaSmiMemoryMiB, 16384);
  assert.equal(v32.memoryGB, 32);
  assert.notEqual(v16.name, v32.name);
  const shared = [
    ["V100", 16, 16384],
    ["A100", 40, null],
    ["A100 80GB", 80, null],
    ["H100", 80, 81559],
    ["RTX PRO 6000", 96, 97887],
    ["Orin", 4, null],
    ["NVIDIA GeForce RTX 5060 Ti", 8, null],
  ] as const;
  for (const [name, memory, mib] of shared) {
    const row = kb.gpu(name)!;
    assert.ok(row.variants && row.variants.length >= 2, name);
    assert.equal(row.memoryGB, memory, name);
    assert.equal(row.nvidiaSmiMemoryMiB ?? null, mib, name);
  }
  assert.equal(kb.gpu("RTX 5060 Ti 8GB")?.nvidiaSmiMemoryMiB, 8151);
  assert.equal(kb.gpu("8.0")?.name, "NVIDIA A100", "a capability stands for its smallest-memory name");
});

test("no alias joins two memory sizes: the old V100 alias, a shared name's wrong memory, are refused", () => {
  assert.deepEqual(findContradictions(data), []);
  const broken = structuredClone(data);
  broken.gpus
    .find((row) => row.name === "Tesla V100-SXM2-32GB")!
    .aliases.push("Tesla V100-SXM2-16GB", "V100");
  broken.gpus.find((row) => row.name === "NVIDIA H100")!.memoryGB = 94;
  broken.gpus.find((row) => row.name === "NVIDIA A100-SXM4-80GB")!.aliases.push("A100 SXM4");
  const problems = findContradictions(broken);
  const expect = [
    /GPU Tesla V100-SXM2-32GB: alias "Tesla V100-SXM2-16GB" names 16 GB, the row has 32 GB/,
    /GPU Tesla V100-SXM2-32GB: alias "V100" also names Tesla V100-SXM2-16GB \(32 GB vs 16 GB\)/,
    /GPU NVIDIA H100: memory 94 GB is not its smallest variant's/,
    /GPU NVIDIA A100-SXM4-80GB: alias "A100 SXM4" also names NVIDIA A100-SXM4-40GB/,
  ];
  for (const pattern of expect)
    assert.ok(
      problems.some((p) => pattern.test(p)),
      `${pattern}\n${problems.join("\n")}`,
    );
});

test("torch 1.12 and 1.13: builds per CUDA variant; 1.13.1 runs on an RTX 4090 through sm_86", () => {
  const variants = (series: string) =>
    kb
      .torchBuildsForVersion(series)
      .map((row) => row.variant)
      .sort();
  assert.deepEqual(variants("1.12.1"), ["cu102", "cu113", "cu116"]);
  assert.deepEqual(variants("1.13.1"), ["cu116", "cu117"]);
  const cu117 = kb.torchBuild("1.13.1+cu117", "", "linux-x86_64")!;
  assert.deepEqual(cu117.archList, ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]);
  assert.deepEqual(cu117.pythons, ["3.7", "3.8", "3.9", "3.10"]);
  assert.equal(cu117.pypiDefault, true);
  const choices = kb.torchBuildsFor({
    computeCapability: asCapability("8.9"),
    driverVersion: asDriver("535.104.05"),
    cpuArch: "x86_64",
    python: "3.10",
  });
  const old = choices.find((choice) => choice.build.torch === "1.13" && choice.build.variant === "cu117")!;
  assert.equal(old.runs, "sass");
  assert.equal(old.via[0], "sm_86");
  // cu102 stops at sm_70 with no PTX: nothing for Ada.
  const rejected = kb.evaluateTorchBuilds({
    computeCapability: asCapability("8.9"),
    driverVersion: asDriver("535.104.05"),
    cpuArch: "x86_64",
  }).rejected;
  assert.ok(
    rejected.some(
      (entry) => entry.build.variant === "cu102" && /no kernel image for sm_89/.test(entry.reason),
    ),
  );
});

test("CUDA 13.4 is a row: R615 natively, 580 under minor-version compatibility, compiles sm_107", () => {
  const toolkit = kb.cudaToolkit("13.4")!;
  assert.equal(toolkit.minDriverLinux, "615");
  assert.equal(toolkit.minorCompatMinDriverLinux, "580");
  assert.ok(toolkit.sassTargets?.includes("107"));
  assert.ok(!toolkit.sassTargets?.includes("70"));
  assert.equal(kb.cudaToolkit("10.2")?.minorCompatMinDriverLinux, null);
});

test("packageRequirements: requires-python and the torch pin of a release", () => {
  const vllm = kb.packageRequirements("vllm", "0.7.3");
  assert.equal(vllm.status, "found");
  assert.equal(vllm.torch, "==2.5.1");
  assert.equal(satisfies("2.5.1", vllm.torch), true);
  // unsloth's requires-python excludes 3.14 in the 2025 releases, admits it from 2026.2.2 on.
  const old = kb.packageRequirements("unsloth", "2025.9.3");
  assert.equal(old.requiresPython, ">=3.9,<3.14");
  assert.equal(satisfies("3.14.0", old.requiresPython), false);
  const recent = kb.packageRequirements("Unsloth", "2026.8.19");
  assert.equal(recent.requiresPython, ">=3.9,<3.15");
  assert.equal(satisfies("3.14.0", recent.requiresPython), true);
  assert.equal(kb.packageRequirements("torchvision", "0.13.1").torch, "==1.12.1");
  assert.equal(kb.packageRequirements("torchvision", "0.18.1").torch, "==2.3.*");
  assert.equal(kb.packageRequirements("bitsandbytes", "0.49.1").requiresPython, ">=3.10");
  assert.equal(kb.packageRequirements("deepspeed", "0.19.6").requiresPython, "", "declares none");
  assert.equal(kb.packageRequirements("flash-attn", "2.8.3.post1").torch, "any");
  assert.equal(kb.packageRequirements("vllm", "0.1.0").status, "not-in-table");
  assert.equal(kb.packageRequirements("left-pad").status, "absent");
  assert.ok(kb.packageRequirements("accelerate").rows.length >= 2, "without a version: every range");
});
