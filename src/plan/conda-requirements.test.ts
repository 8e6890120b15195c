import { test } from "node:test";
import { asDriver } from "../../test/support/driver.js";
import { containerOf, nativeOf } from "../plan/types.js";
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { readProject } from "../gather/project.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { projectRequirements } from "../project/requirements.js";
import { pytorchCudaIndexUrl } from "../project/routes.js";
import { torchRoutes } from "../project/torch-routes.js";
import { linuxMarkers } from "../project/markers.js";
import { makePlan } from "./index.js";
import { targetFromName } from "./target.js";
import { initOptions } from "../../test/support/init-options.js";
import { asCapability } from "../../test/support/capability.js";

const FIXTURES = resolve("test/fixtures/projects");
test("pixi.toml: the default environment's conda and PyPI deps as PyPI requirements, pytorch -> torch with its pin", () => {
  const { requirements, notes, pythonPins } = projectRequirements(
    readProject(join(FIXTURES, "pixi-gb10-conda-forge")),
  );
  assert.deepEqual(pythonPins, [{ specifier: "==3.11.*", raw: 'python = "3.11.*"', origin: "pixi.toml:16" }]);
  assert.deepEqual(
    requirements.map((r) => `${r.normalizedName}${r.specifier} ${r.origin}`),
    [
      "torch==2.5.1 pixi.toml:17",
      "transformers>=4.45,<5 pixi.toml:18",
      "biopython>=1.84,<2 pixi.toml:19",
      "pandas>=2.2,<3 pixi.toml:20",
      "scikit-learn>=1.5,<2 pixi.toml:21",
      "tqdm>=4.66,<5 pixi.toml:22",
      "einops>=0.8 pixi.toml:25",
    ],
    "python is a pin on the plan's Python, not a package; pytest is in the dev feature only",
  );
  assert.ok(notes.some((n) => /pytorch -> torch/.test(n)));
});

test("environment.yml: conda-only packages are left out and named; the pip list is kept", () => {
  const { requirements, notes } = projectRequirements(readProject(join(FIXTURES, "conda-pytorch-channel")));
  const names = requirements.map((r) => r.normalizedName);
  assert.ok(names.includes("torch") && names.includes("numpy") && names.includes("transformers"));
  assert.ok(!names.includes("pytorch-cuda") && !names.includes("python") && !names.includes("pip"));
  assert.equal(requirements.find((r) => r.normalizedName === "numpy")?.specifier, "<2");
  // pytorch-cuda=12.1 is not a package to install but the choice of torch's CUDA build: a route to cu121.
  assert.ok(!notes.some((n) => /pytorch-cuda/.test(n)), notes.join("\n"));
  assert.deepEqual(
    torchRoutes(
      readProject(join(FIXTURES, "conda-pytorch-channel")),
      linuxMarkers("x86_64", null),
      new Set(["torch"]),
    ).map((r) => [r.torchIndex?.variant.tag, r.indexUrl, r.origin]),
    [["cu121", "https://download.pytorch.org/whl/cu121", "environment.yml:17 pytorch::pytorch-cuda=12.1"]],
  );
  assert.equal(pytorchCudaIndexUrl(">=11.8"), null, "a range picks no one build");
  assert.equal(pytorchCudaIndexUrl("==11.8"), "https://download.pytorch.org/whl/cu118");
});

test("seed 000: init --target dgx-spark for the pixi project plans a torch with code for 12.1 and reports the 2.5.1 pin", () => {
  const kb = loadKnowledgeBase();
  const project = readProject(join(FIXTURES, "pixi-gb10-conda-forge"));
  const target = targetFromName(kb, {
    gpu: "dgx-spark",
    driver: "580.95.05",
    cpuArch: null,
    flag: "--target",
  });
  const plan = makePlan(kb, project, target, initOptions());
  assert.equal(plan.strategy, "native");
  const build = nativeOf(plan)!.build;
  assert.equal(build.platform, "linux-aarch64");
  // No 2.5 build has code for 12.1: the pin moves to the nearest series that runs (the pin
  // policy), and that build is one the KB says runs natively.
  const verdict = kb
    .torchBuildsFor({
      computeCapability: asCapability("12.1"),
      driverVersion: asDriver("580.95.05"),
      cpuArch: "aarch64",
    })
    .find((c) => c.build.torch === build.torch && c.build.variant === build.variant);
  assert.equal(verdict?.runs, "sass");
  assert.equal(build.torch, "2.9");
  // pixi.toml:16 python = "3.11.*" holds the venv's Python, as requires-python would.
  assert.equal(nativeOf(plan)!.python, "3.11");
  assert.match(
    plan.decisions.find((d) => d.topic === "python")!.reason,
    /python = "3\.11\.\*" \(pixi\.toml:16\)/,
  );
  assert.ok(
    plan.conflicts.some(
      (c) => c.requirement?.origin === "pixi.toml:17" && c.requirement?.specifier === "==2.5.1",
    ),
  );
  assert.ok(plan.install.some((r) => r.normalizedName === "transformers"));
  // A container plan makes the same change (the pin policy): no image's torch is 2.5.1, so it plans
  // the image of the nearest series that runs and installs the pixi deps on the image's torch.
  const container = makePlan(kb, project, target, initOptions({ strategy: "container" }));
  assert.ok(
    container.conflicts.some((c) => c.requirement?.origin === "pixi.toml:17" && c.provided === "2.9.*"),
    container.conflicts.map((c) => c.message).join("\n"),
  );
  const image = containerOf(container)!.image;
  const imageVerdict = kb
    .judgeNgcImages({
      computeCapability: asCapability("12.1"),
      driverVersion: asDriver("580.95.05"),
      cpuArch: "aarch64",
    })
    .find((v) => v.image.tag === image.tag);
  assert.equal(imageVerdict?.runs, true, imageVerdict?.reason);
  assert.ok(container.install.some((r) => r.normalizedName === "biopython"));
  assert.ok(!container.install.some((r) => r.normalizedName === "torch"), "the image's torch is kept");
  // The image brings its own Python (the KB row's), which the pixi python pin does not accept: reported.
  assert.ok(image.python && !image.python.startsWith("3.11."), `image Python ${image.python}`);
  assert.ok(
    container.conflicts.some(
      (c) => c.pin === 'python = "3.11.*" (pixi.toml:16)' && c.provided === image.python,
    ),
    container.conflicts.map((c) => c.message).join("\n"),
  );
  assert.match(image.torch, /^2\.9\./);
});
