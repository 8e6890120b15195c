/**
 * The planner's decisions for the issue's cases, one rule per test, on the packaged KB and real
 * project files read by the real reader.
 */
import { containerOf, nativeOf } from "../plan/types.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KnowledgeBase, loadKnowledgeBase } from "../kb/index.js";
import { readProject } from "../gather/project.js";
import { makePlan } from "./index.js";
import { targetFromName } from "./target.js";
import { torchRoutes } from "../project/torch-routes.js";
import { linuxMarkers } from "../project/markers.js";
import { torchIndexFromUrl } from "../vocabulary/torch-variant.js";
import { nvccNeeded } from "./nvcc.js";
import type { InitOptions, Plan } from "./types.js";
import { initOptions } from "../../test/support/init-options.js";
import { asCapability } from "../../test/support/capability.js";

const kb = loadKnowledgeBase();

function projectDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-decisions-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

function plan(
  files: Record<string, string>,
  gpu: string,
  driver: string | null,
  options: Partial<InitOptions> = {},
): Plan {
  const target = targetFromName(kb, { gpu, driver, cpuArch: null, flag: `--target ${gpu}` });
  return makePlan(kb, readProject(projectDir(files)), target, initOptions(options));
}

function decision(result: Plan, topic: string): string {
  const found = result.decisions.find((d) => d.topic === topic);
  assert.ok(found, `no "${topic}" decision in ${result.decisions.map((d) => d.topic).join(", ")}`);
  return `${found.choice} | ${found.reason}`;
}

test("container: the newest image whose torch the pin accepts; one that fails it is never chosen", () => {
  // The issue's new user: an H100 project with torch>=2.7 gets an image whose torch is 2.7 or newer.
  const h100 = plan({ "requirements.txt": "torch>=2.7\n" }, "h100", "580.159.04", { strategy: "container" });
  // The newest image whose CUDA the driver runs natively (25.11, CUDA 13.0 on 580); the 26.xx
  // images (CUDA 13.1+) run on 580 only under minor-version compatibility and are passed over.
  assert.equal(containerOf(h100)?.image.tag, "25.11");
  assert.match(containerOf(h100)?.image.torch ?? "", /^2\.10\.0a0/);
  assert.deepEqual(h100.conflicts, []);
  assert.match(
    decision(h100, "base image"),
    /with its own CUDA driver and whose torch the project's torch>=2\.7 \(requirements\.txt:1\) accepts/,
  );
  // No image satisfies: init stops, naming the pin and each image it excludes.
  assert.throws(
    () => plan({ "requirements.txt": "torch>=2.15\n" }, "h100", "580.159.04", { strategy: "container" }),
    /torch>=2\.15 \(requirements\.txt:1\) excludes 26\.08 \(torch 2\.14\.0a0\+4fdf77b940\.nv26\.08\), .*23\.02 \(torch 1\.14\.0a0\+44dac51\)/,
  );
  // A pre-release counts below its release, as pip judges the installed torch: 2.14.0a0 fails >=2.14.
  assert.throws(
    () => plan({ "requirements.txt": "torch>=2.14\n" }, "rtx-5090", "580", { strategy: "container" }),
    /excludes 26\.08 .*\(2\.14\.0a0\+4fdf77b940\.nv26\.08 is a pre-release, which pip counts below 2\.14\.0\)/,
  );
});

test("auto on an RTX 5090 with torch==2.8.0 and numpy<2: native keeps both pins (torch 2.8 cu128, Python 3.12)", () => {
  const result = plan({ "requirements.txt": "torch==2.8.0\nnumpy<2\n" }, "rtx-5090", "580");
  assert.equal(result.strategy, "native");
  assert.equal(nativeOf(result)?.build.torch, "2.8");
  assert.equal(nativeOf(result)?.build.variant, "cu128");
  assert.equal(nativeOf(result)?.python, "3.12");
  assert.deepEqual(result.conflicts, []);
  assert.match(decision(result, "strategy"), /torch==2\.8\.0 \(requirements\.txt:1\) excludes .*25\.10/);
  assert.match(
    decision(result, "python"),
    /3\.13: numpy<2 \(requirements\.txt:2\) has wheels for 3\.8-3\.12 only/,
  );
});

test("auto: a container that would drop a pin on what the image ships loses to native", () => {
  // Derived from the packaged KB by one field: 25.10's numpy set to 2.2.6, as the FlashRT
  // Dockerfile (a source of that row) lists it; the packaged row leaves numpy unknown.
  const data = structuredClone(kb.data);
  data.ngcImages.find((row) => row.tag === "25.10")!.numpy = "2.2.6";
  const derived = new KnowledgeBase(data);
  const target = targetFromName(derived, {
    gpu: "rtx-5070-ti",
    driver: "580",
    cpuArch: null,
    flag: "--target",
  });
  const run = (requirements: string, strategy: InitOptions["strategy"]) =>
    makePlan(
      derived,
      readProject(projectDir({ "requirements.txt": requirements })),
      target,
      initOptions({ strategy }),
    );
  // Another image that keeps numpy<2 (numpy not known to fail it) is preferred over 25.10.
  assert.notEqual(containerOf(run("torch>=2.9\nnumpy<2\n", "container"))?.image.tag, "25.10");
  // torch>2.8,<2.9.1 leaves only 25.10 (2.9.0a0), which would drop numpy<2: native keeps both.
  const auto = run("torch>2.8,<2.9.1\nnumpy<2\n", "auto");
  assert.equal(auto.strategy, "native");
  assert.equal(nativeOf(auto)?.build.torch, "2.9");
  assert.match(decision(auto, "strategy"), /25\.10, would not obey numpy<2/);
  const container = run("torch>2.8,<2.9.1\nnumpy<2\n", "container");
  assert.equal(containerOf(container)?.image.tag, "25.10");
  assert.match(
    container.conflicts[0]?.message ?? "",
    /numpy<2 \(requirements\.txt:2\) does not accept .*numpy 2\.2\.6/,
  );
  // With numpy unknown (the packaged row), the plan cannot claim a drop: it warns that pip checks it at build time.
  const packaged = plan({ "requirements.txt": "torch>=2.9\nnumpy<2\n" }, "rtx-5070-ti", "580", {
    strategy: "container",
  });
  assert.deepEqual(packaged.conflicts, []);
  assert.ok(
    packaged.warnings.some((w) =>
      /numpy<2: the knowledge base does not know the numpy of nvcr\.io\/nvidia\/pytorch:\d{2}\.\d{2}-py3; the build pins the image.s own numpy/.test(
        w,
      ),
    ),
  );
});

test("native Python: the newest every pinned compiled package has wheels for, else the newest torch tag", () => {
  assert.equal(
    nativeOf(plan({ "requirements.txt": "torch\n" }, "h100", "580", { strategy: "native" }))?.python,
    "3.14",
  );
  assert.equal(
    nativeOf(plan({ "requirements.txt": "torch\nnumpy==2.2.6\n" }, "h100", "580", { strategy: "native" }))
      ?.python,
    "3.13",
  );
  // requires-python and the pin together.
  const pyproject =
    '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.9,<3.12"\ndependencies = ["torch", "numpy<2"]\n';
  assert.equal(
    nativeOf(plan({ "pyproject.toml": pyproject }, "h100", "580", { strategy: "native" }))?.python,
    "3.11",
  );
  // A compiled package the KB knows but has no wheel-Python row for is named, not guessed.
  assert.match(
    decision(
      plan({ "requirements.txt": "torch\nflash-attn\n" }, "h100", "580", { strategy: "native" }),
      "python",
    ),
    /not known: flash-attn: compiled, but the Pythons of its linux-x86_64 wheels are not in the knowledge base/,
  );
});

test("torch routes: read from [tool.uv.sources] and requirements index options", () => {
  const dir = projectDir({
    "pyproject.toml":
      '[project]\nname = "p"\nversion = "0"\ndependencies = ["torch"]\n[tool.uv.sources]\ntorch = [{ index = "pt" }]\n[[tool.uv.index]]\nname = "pt"\nurl = "https://download.pytorch.org/whl/cu126"\nexplicit = true\n',
    "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.5.1\n",
  });
  const routes = torchRoutes(readProject(dir), linuxMarkers("x86_64", null), new Set(["torch"]));
  assert.deepEqual(
    routes.map((r) => [r.package, r.torchIndex?.variant.tag, r.origin]),
    [
      ["torch", "cu126", "pyproject.toml [tool.uv.sources]"],
      ["torch", "cu118", "requirements.txt --extra-index-url"],
    ],
  );
  assert.equal(torchIndexFromUrl("https://download.pytorch.org/whl/nightly/cu130/")?.variant.tag, "cu130");
  assert.equal(torchIndexFromUrl("https://pypi.org/simple"), null);
});

test("native: a route to a variant that runs is kept; one that cannot run is replaced and reported", () => {
  const routed = (variant: string) =>
    `[project]\nname = "p"\nversion = "0"\ndependencies = ["torch"]\n[tool.uv.sources]\ntorch = [{ index = "pt" }]\n[[tool.uv.index]]\nname = "pt"\nurl = "https://download.pytorch.org/whl/${variant}"\nexplicit = true\n`;
  const kept = plan({ "pyproject.toml": routed("cu126") }, "h100", "580");
  assert.equal(kept.strategy, "native", "a container would drop the route, native keeps it");
  assert.equal(nativeOf(kept)?.build.variant, "cu126");
  assert.match(decision(kept, "torch route"), /kept: pyproject\.toml \[tool\.uv\.sources\] → cu126/);
  const replaced = plan({ "pyproject.toml": routed("cu118") }, "rtx-5090", "580", { strategy: "native" });
  assert.notEqual(nativeOf(replaced)?.build.variant, "cu118");
  assert.match(
    replaced.conflicts[0]?.message ?? "",
    /sends torch to https:\/\/download\.pytorch\.org\/whl\/cu118: no cu118 build/,
  );
  // requirements index options too.
  const req = plan(
    { "requirements.txt": "--index-url https://download.pytorch.org/whl/cu126\ntorch\n" },
    "h100",
    "580",
    { strategy: "native" },
  );
  assert.equal(nativeOf(req)?.build.variant, "cu126");
});

test("source builds: flash-attn (GitHub-release wheels only) is built without asking, with its own arch variable", () => {
  const result = plan({ "requirements.txt": "torch\nflash-attn\n" }, "h100", "580", { strategy: "native" });
  assert.deepEqual(
    result.sourceBuilds.map((b) => [b.name, b.archList, b.env]),
    [["flash-attn", "9.0", { FLASH_ATTN_CUDA_ARCHS: "90", FLASH_ATTENTION_FORCE_BUILD: "TRUE" }]],
  );
  assert.match(decision(result, "build flash-attn"), /publishes no wheel on a package index/);
  // GB10 (12.1) builds sm_120, the one value of its list that runs there; an L4 (8.9) builds sm_80.
  assert.equal(
    plan({ "requirements.txt": "flash-attn\n" }, "dgx-spark", "580", { strategy: "native" }).sourceBuilds[0]
      ?.env["FLASH_ATTN_CUDA_ARCHS"],
    "120",
  );
  assert.equal(
    plan({ "requirements.txt": "flash-attn\n" }, "l4", "580", { strategy: "native" }).sourceBuilds[0]?.env[
      "FLASH_ATTN_CUDA_ARCHS"
    ],
    "80",
  );
  // In a container whose image ships flash-attn (25.10 lists it), the image's build is kept.
  const ti = plan({ "requirements.txt": "flash-attn\n" }, "rtx-5070-ti", "580", { strategy: "container" });
  assert.equal(containerOf(ti)?.image.tag, "25.10");
  assert.deepEqual(ti.sourceBuilds, []);
});

test("nvcc for source builds: torch's CUDA major, at least its minor, and what the GPU's arch needs", () => {
  assert.deepEqual(
    [
      nvccNeeded(kb, "13.0", asCapability("12.1"))?.major,
      nvccNeeded(kb, "13.0", asCapability("12.1"))?.minimum,
    ],
    ["13", "13.0"],
  );
  // torch cu128 on GB10: sm_121 first compiles with CUDA 12.9.
  const cu128 = nvccNeeded(kb, "12.8", asCapability("12.1"));
  assert.equal(cu128?.minimum, "12.9");
  assert.match(cu128?.reason ?? "", /sm_121 needs CUDA 12\.9 or newer/);
  assert.equal(nvccNeeded(kb, "12.6", asCapability("7.0"))?.minimum, "12.6");
  assert.equal(nvccNeeded(kb, null, asCapability("9.0")), null);
  // A plan with a source build carries it; triton (compiles at run time, its own ptxas) needs none.
  const xformers = plan({ "requirements.txt": "torch\nxformers\n" }, "dgx-spark", "580", {
    strategy: "native",
  });
  assert.equal(xformers.buildToolkit?.minimum, "13.0");
  const triton = plan({ "requirements.txt": "torch\n" }, "dgx-spark", "580", {
    strategy: "native",
    buildFromSource: ["triton"],
  });
  assert.equal(triton.buildToolkit, null);
  // A package the KB does not know is built when asked, but not assumed to compile CUDA code.
  const unknown = plan({ "requirements.txt": "torch\ntinyext==1.0\n" }, "h100", "580", {
    strategy: "native",
    buildFromSource: ["tinyext"],
  });
  assert.deepEqual(
    unknown.sourceBuilds.map((b) => [b.name, b.needsNvcc]),
    [["tinyext", false]],
  );
  assert.equal(unknown.buildToolkit, null);
});

test("named systems without --driver: DGX Spark is planned for the driver it ships, Thor says its driver is not known", () => {
  const spark = plan({ "requirements.txt": "torch\n" }, "dgx-spark", null, { strategy: "native" });
  assert.equal(spark.target.driverVersion, "580.82.09");
  assert.match(decision(spark, "system"), /DGX Spark \(DGX OS 7\) with driver 580\.82\.09/);
  // With the driver known, CUDA 13.0 (native on 580.82.09) wins over 13.2 (needs 595).
  assert.equal(nativeOf(spark)?.build.variant, "cu130");
  const thor = plan({ "requirements.txt": "torch\n" }, "jetson-thor", null, { strategy: "native" });
  assert.equal(thor.target.driverVersion, null);
  assert.match(
    decision(thor, "system"),
    /driver not known \|.*no source gives the driver Jetson AGX Thor ships/,
  );
  // A GPU name is not a system; an explicit --driver wins.
  assert.equal(plan({ "requirements.txt": "torch\n" }, "gb10", null).target.driverVersion, null);
  assert.equal(
    plan({ "requirements.txt": "torch\n" }, "dgx-spark", "590.44.01").target.driverVersion,
    "590.44.01",
  );
});

test("Jetson Orin and Thor: a container plan takes NVIDIA's -igpu image of their JetPack; other GPUs never get one", () => {
  const orin = plan({ "requirements.txt": "torch\n" }, "orin", null, { strategy: "container" });
  assert.match(containerOf(orin)?.ref ?? "", /^nvcr\.io\/nvidia\/pytorch:\d{2}\.\d{2}-py3-igpu$/);
  const thor = plan({ "requirements.txt": "torch\n" }, "jetson-thor", "580", { strategy: "container" });
  assert.match(containerOf(thor)?.ref ?? "", /-py3-igpu$/);
  const gh200 = plan({ "requirements.txt": "torch\n" }, "gh200", "580", { strategy: "container" });
  assert.doesNotMatch(containerOf(gh200)?.ref ?? "", /igpu/);
  assert.match(containerOf(gh200)?.ref ?? "", /^nvcr\.io\/nvidia\/pytorch:\d{2}\.\d{2}-py3$/);
});

test("container with the driver not given: images passed over are explained without the internal 'any driver' placeholder", () => {
  // b200 and jetson-thor have newer images (CUDA 13.4, not in the toolkit table) that run but are passed over.
  for (const gpu of ["b200", "jetson-thor"]) {
    const result = plan({ "requirements.txt": "torch\n" }, gpu, null, { strategy: "container" });
    const reason = decision(result, "base image");
    assert.match(reason, /newer ones are passed over \(/, reason);
    assert.doesNotMatch(reason, /9999/, reason);
  }
});

test("seed 001 as a container: the image of torch 2.7, the exact pin and torchvision==0.22.1 moved out with their reasons", () => {
  const seed001 = { "requirements.txt": "torch==2.7.1\ntorchvision==0.22.1\nnumpy<2\n" };
  const result = plan(seed001, "rtx-5070-ti", "580", { strategy: "container" });
  const image = containerOf(result)!.image;
  assert.match(image.torch, /^2\.7\.0a0/, "NVIDIA's build of the pinned minor");
  const messages = result.conflicts.map((c) => c.message);
  assert.ok(
    messages.some((m) =>
      /^torch==2\.7\.1 \(requirements\.txt:1\): moved out of the installed requirements/.test(m),
    ),
    messages.join("\n"),
  );
  assert.ok(
    messages.some((m) =>
      /^torchvision==0\.22\.1 \(requirements\.txt:2\): left out; .*own torchvision is kept/.test(m),
    ),
    messages.join("\n"),
  );
  assert.ok(!result.install.some((r) => r.normalizedName === "torchvision" || r.normalizedName === "torch"));
  assert.deepEqual(containerOf(result)!.imports, ["torchvision"], "the build imports it from the image");
  // The same project, auto: a native venv keeps every pin exactly, so it wins.
  const auto = plan(seed001, "rtx-5070-ti", "580");
  assert.equal(auto.strategy, "native");
  assert.equal(nativeOf(auto)!.build.torch, "2.7");
  assert.deepEqual(auto.conflicts, []);
});

test("a torchvision pin is no conflict in a native plan, and an unpinned one is no conflict anywhere", () => {
  const native = plan({ "requirements.txt": "torch==2.7.1\ntorchvision==0.22.1\n" }, "rtx-5070-ti", "580", {
    strategy: "native",
  });
  assert.deepEqual(native.conflicts, []);
  assert.ok(native.install.some((r) => r.normalizedName === "torchvision"));
  const container = plan({ "requirements.txt": "torch\ntorchvision\n" }, "h100", "580", {
    strategy: "container",
  });
  assert.deepEqual(container.conflicts, []);
});
