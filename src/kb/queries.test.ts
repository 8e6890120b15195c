import { test } from "node:test";
import { asDriver } from "../../test/support/driver.js";
import assert from "node:assert/strict";
import { KnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { docsUrl } from "../docs-url.js";
import { coverageFor, parseComputeCapability } from "./compat.js";
import { asCapability } from "../../test/support/capability.js";

const kb = new KnowledgeBase(loadPackagedData());

test("GPU names as nvidia-smi, torch and users write them", () => {
  assert.equal(kb.gpu("NVIDIA H100 80GB HBM3")?.name, "NVIDIA H100 80GB HBM3");
  assert.equal(kb.gpu("h100")?.computeCapability, "9.0");
  assert.equal(kb.gpu("NVIDIA H100 PCIe")?.memoryBandwidthGBs, 2000);
  assert.equal(kb.gpu("NVIDIA GB10")?.computeCapability, "12.1");
  assert.equal(kb.gpu("gb10")?.name, "NVIDIA GB10");
  assert.equal(kb.gpu("dgx spark")?.name, "NVIDIA GB10");
  assert.equal(kb.gpu("NVIDIA GeForce RTX 5070 Ti")?.computeCapability, "12.0");
  assert.equal(kb.gpu("5070ti")?.name, "NVIDIA GeForce RTX 5070 Ti");
  assert.equal(kb.gpu("rtx 5070 ti")?.name, "NVIDIA GeForce RTX 5070 Ti");
  assert.equal(kb.gpu("sm_120")?.computeCapability, "12.0");
  assert.equal(kb.gpu("12.1")?.name, "NVIDIA GB10");
  assert.equal(kb.gpu("Tesla T4")?.computeCapability, "7.5");
  assert.equal(kb.gpu("NVIDIA H100 NVL")?.name, "NVIDIA H100 NVL");
});

test("an unknown GPU name gives the closest matches", () => {
  const result = kb.resolveGpu("H1OO");
  assert.equal(result.match, null);
  assert.ok(
    result.candidates.some((row) => row.name.startsWith("NVIDIA H100")),
    result.candidates.map((r) => r.name).join(),
  );
  assert.equal(kb.resolveGpu("quantum toaster").match, null);
});

test("H100 SXM peaks are the dense datasheet figures (half the sparse ones)", () => {
  const h100 = kb.gpu("H100 SXM")!;
  assert.equal(h100.name, "NVIDIA H100 80GB HBM3");
  assert.deepEqual(h100.peakTflops, { bf16: 989.5, fp16: 989.5, tf32: 494.5, fp32: 67 });
  assert.equal(h100.memoryBandwidthGBs, 3350);
  // "H100" alone names SXM, PCIe and NVL: their common capability and smallest memory, no peaks.
  const family = kb.gpu("h100")!;
  assert.deepEqual(family.variants, ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"]);
  assert.equal(family.computeCapability, "9.0");
  assert.equal(family.memoryGB, 80);
  assert.equal(family.nvidiaSmiMemoryMiB, 81559);
  assert.deepEqual(family.peakTflops, { bf16: null, fp16: null, tf32: null, fp32: null });
});

test("GB10 + driver 580 + aarch64 + Python 3.12: a CUDA 13 aarch64 wheel with sm_120 SASS", () => {
  const choices = kb.torchBuildsFor({
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver("580"),
    cpuArch: "aarch64",
    python: "3.12",
  });
  assert.ok(choices.length > 0);
  for (const choice of choices) {
    assert.equal(choice.build.platform, "linux-aarch64");
    assert.ok(choice.build.pythons.includes("3.12"));
    assert.equal(choice.runs, "sass"); // GB10 (12.1) runs sm_120 cubins
  }
  const best = choices[0]!;
  assert.equal(best.build.variant, "cu130");
  assert.equal(best.driver, "native");
  assert.deepEqual(best.via, ["sm_120"]);
  assert.equal(
    best.pip,
    `pip install "torch==${best.build.torch}.*" --index-url https://download.pytorch.org/whl/cu130`,
  );
  // cu126 aarch64 wheels carry only 8.0/9.0: never offered for GB10
  assert.ok(!choices.some((choice) => choice.build.variant === "cu126"));
  // 2.11 is the first release whose PyPI aarch64 wheel is CUDA (cu130): offered without an index
  const pypi = choices.find((choice) => choice.build.torch === "2.11" && choice.build.variant === "cu130")!;
  assert.equal(pypi.pip, 'pip install "torch==2.11.*"');
});

test("RTX 5070 Ti + torch 2.5.1 cu124: no kernel image (the crash in the field)", () => {
  const gpu = kb.gpu("NVIDIA GeForce RTX 5070 Ti")!;
  const build = kb.torchBuild("2.5.1", "cu124", "linux-x86_64")!;
  assert.ok(build);
  assert.equal(build.archList.includes("sm_120"), false);
  assert.equal(coverageFor(build.archList, parseComputeCapability(gpu.computeCapability)!).how, "none");
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: asCapability(gpu.computeCapability),
    driverVersion: asDriver("570.133.07"),
    cpuArch: "x86_64",
  });
  const rejected = evaluation.rejected.find((entry) => entry.build === build)!;
  assert.match(rejected.reason, /no kernel image for sm_120/);
  assert.ok(evaluation.choices.every((choice) => choice.build.torch !== "2.5"));
  assert.ok(
    evaluation.choices.some((choice) => choice.build.torch === "2.7" && choice.build.variant === "cu128"),
  );
});

test("H100 + torch 2.11.0+cu130 on driver 580.159.04: native sm_90 SASS (our capture)", () => {
  const build = kb.torchBuild("2.11.0+cu130", "", "linux-x86_64")!;
  assert.deepEqual(build.archList, ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]);
  assert.equal(build.confidence, "measured");
  // The loader links gpuprep's own pages at the release tag (source-label.ts).
  assert.ok(build.sources.some((source) => source.url === docsUrl("docs/measurements/2026-11-22-h100.md")));
  const choice = kb
    .torchBuildsFor({
      computeCapability: asCapability("9.0"),
      driverVersion: asDriver("580.159.04"),
      cpuArch: "x86_64",
      python: "3.12",
    })
    .find((entry) => entry.build === build)!;
  assert.equal(choice.runs, "sass");
  assert.deepEqual(choice.via, ["sm_90"]);
  assert.equal(choice.driver, "native");
});

test("B200 with driver 535: no build runs, the driver predates the GPU", () => {
  const b200 = kb.gpu("NVIDIA B200")!;
  assert.equal(b200.minDriverLinux, "570.133.20");
  assert.equal(kb.driverTooOldForGpu(b200, asDriver("535.230.02")), true);
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: asCapability("10.0"),
    driverVersion: asDriver("535.230.02"),
    cpuArch: "x86_64",
  });
  assert.deepEqual(evaluation.choices, []);
  const cu128 = evaluation.rejected.find(
    (entry) => entry.build.torch === "2.11" && entry.build.variant === "cu128",
  )!;
  assert.match(cu128.reason, /older than 570\.133\.20, the first driver that supports this GPU/);
  // with a supported driver the cu128/cu130 builds come back
  assert.ok(
    kb.torchBuildsFor({
      computeCapability: asCapability("10.0"),
      driverVersion: asDriver("580.95.05"),
      cpuArch: "x86_64",
    }).length > 0,
  );
});

test("driver rules: too old for CUDA 13, and PTX JIT refused under minor-version compatibility", () => {
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: asCapability("8.0"),
    driverVersion: asDriver("550.54.14"),
    cpuArch: "x86_64",
  });
  const cu130 = evaluation.rejected.find((entry) => entry.build.variant === "cu130")!;
  assert.match(cu130.reason, /too old for CUDA 13\.0/);
  const cu128 = evaluation.choices.find((entry) => entry.build.variant === "cu128")!;
  assert.equal(cu128.driver, "minor-compat");
  // A 13.x GPU has no SASS in 2.7 cu128; only compute_120 PTX, which a 12.x-minor-compat driver cannot JIT.
  const future = kb.evaluateTorchBuilds({
    computeCapability: asCapability("13.0"),
    driverVersion: asDriver("560.35.03"),
    cpuArch: "x86_64",
  });
  const ptx = future.rejected.find(
    (entry) => entry.build.torch === "2.7" && entry.build.variant === "cu128",
  )!;
  assert.match(ptx.reason, /only PTX \(compute_120\) covers this GPU/);
});

test("torch builds per version and unknown versions", () => {
  const builds = kb.torchBuildsForVersion("2.11.0");
  assert.deepEqual(builds.map((row) => `${row.variant}/${row.platform}`).sort(), [
    "cu126/linux-aarch64",
    "cu126/linux-x86_64",
    "cu128/linux-aarch64",
    "cu128/linux-x86_64",
    "cu129/linux-aarch64",
    "cu129/linux-x86_64",
    "cu130/linux-aarch64",
    "cu130/linux-x86_64",
  ]);
  assert.equal(kb.torchBuild("1.11.0", "cu113", "linux-x86_64"), null);
  assert.equal(kb.cudaToolkit("13.0")?.sassTargets?.includes("70"), false);
});
test("new GPU rows: RTX 5070, RTX PRO 6000 Server and Max-Q, GB300 by their nvidia-smi names", () => {
  const rtx5070 = kb.gpu("NVIDIA GeForce RTX 5070")!;
  assert.equal(rtx5070.computeCapability, "12.0");
  assert.equal(rtx5070.nvidiaSmiMemoryMiB, 12227);
  assert.equal(kb.gpu("5070")?.name, "NVIDIA GeForce RTX 5070");
  assert.equal(kb.gpu("rtx 5070 ti")?.name, "NVIDIA GeForce RTX 5070 Ti", "the Ti keeps its own row");
  for (const name of [
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
  ]) {
    const row = kb.gpu(name)!;
    assert.equal(row.name, name);
    assert.equal(row.computeCapability, "12.0");
    assert.equal(row.nvidiaSmiMemoryMiB, 97887);
  }
  // typed short of the full name, the one row that starts with it
  assert.equal(kb.gpu("RTX PRO 6000 Blackwell Server")?.name, "NVIDIA RTX PRO 6000 Blackwell Server Edition");
  const gb300 = kb.gpu("NVIDIA GB300")!;
  assert.equal(gb300.computeCapability, "10.3");
  assert.equal(gb300.nvidiaSmiMemoryMiB, 284208);
  assert.equal(kb.gpu("NVIDIA B300 SXM6 AC")?.nvidiaSmiMemoryMiB, 275040);
});

test("Rubin is 10.7 with its own arch row; CUDA 13.4 is the first toolkit that compiles sm_107", () => {
  const rubin = kb.gpu("rubin")!;
  assert.equal(rubin.computeCapability, "10.7");
  assert.equal(kb.gpu("10.7")?.name, rubin.name);
  assert.equal(kb.gpu("sm_107")?.name, rubin.name);
  const arch = kb.arch(asCapability(rubin.computeCapability))!;
  assert.equal(arch.architecture, "Rubin");
  assert.equal(arch.tegra, false);
  assert.deepEqual(
    kb.data.cudaToolkits.filter((row) => row.sassTargets?.includes("107")).map((row) => row.version),
    ["13.4"],
  );
});

test("Jetson Orin modules are 8.7 and Tegra; a family name without the module is ambiguous", () => {
  const modules = [
    "Jetson AGX Orin 32GB",
    "Jetson Orin NX 16GB",
    "Jetson Orin NX 8GB",
    "Jetson Orin Nano 8GB",
    "Jetson Orin Nano 4GB",
    "Jetson Orin Nano Super",
  ];
  for (const name of modules) {
    const row = kb.gpu(name)!;
    assert.equal(row.computeCapability, "8.7", name);
    assert.equal(row.tegra, true, name);
    assert.equal(row.hostCpuArch, "aarch64", name);
    assert.equal(kb.arch(asCapability(row.computeCapability))?.tegra, true);
  }
  assert.equal(kb.gpu("Orin NX 8GB")?.memoryBandwidthGBs, 102);
  assert.equal(kb.gpu("Jetson Orin Nano 4GB")?.memoryGB, 4);
  const nano = kb.resolveGpu("Jetson Orin Nano");
  assert.equal(nano.match, null);
  assert.deepEqual(nano.candidates.map((row) => row.name).sort(), [
    "Jetson Orin Nano 4GB",
    "Jetson Orin Nano 8GB",
    "Jetson Orin Nano Super",
  ]);
  // torch names every Orin module "Orin": the capability is right whichever module it is
  assert.equal(kb.gpu("Orin")?.computeCapability, "8.7");
});

test("RTX 5090 on driver 570: cu128 natively and cu129 under minor-version compatibility, no cu130", () => {
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: asCapability(kb.gpu("RTX 5090")!.computeCapability),
    driverVersion: asDriver("570"),
    cpuArch: "x86_64",
  });
  const variants = new Set(evaluation.choices.map((choice) => choice.build.variant));
  assert.ok(variants.has("cu128"));
  assert.ok(variants.has("cu129"));
  assert.ok(!variants.has("cu130"));
  const cu129 = evaluation.choices.find(
    (choice) => choice.build.torch === "2.9" && choice.build.variant === "cu129",
  )!;
  assert.equal(cu129.driver, "minor-compat");
  assert.equal(cu129.runs, "sass");
  assert.match(cu129.pip, /--index-url https:\/\/download\.pytorch\.org\/whl\/cu129$/);
  const cu130 = evaluation.rejected.find(
    (entry) => entry.build.torch === "2.11" && entry.build.variant === "cu130",
  )!;
  assert.match(cu130.reason, /too old for CUDA 13\.0/);
  // the best choice is the newest release PyTorch built for CUDA 12.8, on the driver's own CUDA
  assert.equal(evaluation.choices[0]!.build.variant, "cu128");
  assert.equal(evaluation.choices[0]!.driver, "native");
});

test("torch 2.9: cu129 exists, and the cu130 aarch64 wheel's PTX is measured, the x86_64 one's is not", () => {
  const cu129 = kb.torchBuild("2.9.1", "cu129", "linux-x86_64")!;
  assert.equal(cu129.pypiDefault, false);
  assert.equal(cu129.ptxUnverified, true);
  assert.ok(!cu129.archList.some((entry) => entry.startsWith("compute_")));
  const arm = kb.torchBuild("2.9.1+cu130", "", "linux-aarch64")!;
  assert.ok(arm.archList.includes("compute_120"));
  assert.equal(arm.ptxUnverified, undefined);
  assert.equal(kb.torchBuild("2.9.1+cu130", "", "linux-x86_64")!.ptxUnverified, true);
  // 2.14 is known, claims no PyPI default and no PTX
  const builds214 = kb.torchBuildsForVersion("2.14.0");
  assert.equal(builds214.length, 6);
  assert.ok(builds214.every((row) => !row.pypiDefault));
  assert.ok(builds214.every((row) => row.archList.every((entry) => entry.startsWith("sm_"))));
});

test("CUDA 13.3: driver 610.43.02 natively, any 580 under minor-version compatibility", () => {
  const toolkit = kb.cudaToolkit("13.3.1")!;
  assert.equal(toolkit.minDriverLinux, "610.43.02");
  assert.equal(kb.driverSupportFor(asDriver("580.95.05"), "13.3")?.support, "minor-compat");
  assert.equal(kb.driverSupportFor(asDriver("575.57.08"), "13.3")?.support, "unsupported");
  assert.equal(kb.newestNativeCuda(asDriver("610.43.03"))?.version, "13.3");
  assert.equal(kb.newestNativeCuda(asDriver("595.71.05"))?.version, "13.2");
  // 13.4: the R615 branch natively (its GA driver is sourced as a branch), 580 under minor compat.
  assert.equal(kb.cudaToolkit("13.4")?.minDriverLinux, "615");
  assert.equal(kb.driverSupportFor(asDriver("615.20.01"), "13.4")?.support, "native");
  assert.equal(kb.driverSupportFor(asDriver("610.43.03"), "13.4")?.support, "minor-compat");
  assert.equal(kb.newestNativeCuda(asDriver("615"))?.version, "13.4");
});
