/**
 * The story checks themselves, each with a firing and a silent case: a plan written by hand the way
 * the seed users fixed things (or the way gpuprep writes it today) must pass or fail the check it
 * is meant to. Without these, a check that can never fail (or never pass) would look like progress.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { examplesDir } from "./helpers.js";
import type { Call } from "./standins.js";
import {
  CONTAINER,
  DGX_SPARK,
  GB10_IMAGE,
  PIXI_STAYS_PIXI,
  SEED_001_CONTAINER,
  TRITON_NOT_SDIST_CONTAINER,
  UNSLOTH_NATIVE,
  XFORMERS_FOR_12_1_CONTAINER,
  pixiTorchRuns,
  type Check,
  type Outcome,
} from "./story-checks.js";

/** A plan as init and the script would leave it: `files` in a fresh project, `before` what was there first. */
function outcome(
  files: Record<string, string>,
  before: Record<string, string> = {},
  calls: Call[] = [],
): Outcome {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-story-check-")), "project");
  for (const [file, text] of Object.entries({ ...before, ...files })) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  const script = { path: "scripts/setup.sh", code: 0, stdout: "", stderr: "" };
  const init = { code: 0, stdout: "", stderr: "" };
  return {
    strategy: "auto",
    args: [],
    dir,
    before: new Map(Object.entries(before)),
    init,
    kind: "native",
    script,
    calls,
  };
}

const call = (tool: string, ...argv: string[]): Call => ({ tool, argv, cwd: "/", env: {} });
const fires = (check: Check, o: Outcome) =>
  assert.throws(() => check.run(o), assert.AssertionError, check.name);
const silent = (check: Check, o: Outcome) => assert.doesNotThrow(() => check.run(o), check.name);
const named = (checks: Check[], start: string) => checks.find((c) => c.name.startsWith(start))!;

test("story check: the container masks /workspace/.venv", () => {
  const check = named(CONTAINER, "the container masks /workspace/.venv");
  const masked = outcome(
    { "compose.yaml": "services:\n  app:\n    volumes: ['.:/workspace', /workspace/.venv]\n" },
    {},
    [call("docker", "run", "--rm", "-v", "/srv/p:/workspace", "-v", "/workspace/.venv", "img", "bash")],
  );
  silent(check, masked);
  const shadowed = outcome({ "compose.yaml": "services:\n  app:\n    volumes: ['.:/workspace']\n" }, {}, [
    call("docker", "run", "--rm", "-v", "/srv/p:/workspace", "img", "bash"),
  ]);
  fires(check, shadowed);
});

test("story check: seed 001's torch, torchvision and numpy pins in a container plan", () => {
  const dockerfile =
    "ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:25.03-py3\nFROM ${BASE_IMAGE} AS base\n" +
    "RUN python3 -m pip list --format=freeze > /opt/gpuprep/base-packages.txt\n" +
    'ENV PIP_CONSTRAINT="/opt/gpuprep/constraints.txt /opt/gpuprep/base-packages.txt"\nFROM base AS app\n';
  const byHand =
    "# torch==2.7.1: nvcr.io/nvidia/pytorch:25.03-py3 brings torch 2.7.0a0, the same minor; left to the image\n" +
    "# torchvision==0.22.1: the image ships the torchvision built for its torch; left to the image\nnumpy<2\nmlflow==3.1.1\n";
  const [image, torch, torchvision, numpy] = SEED_001_CONTAINER;
  const good = outcome({ Dockerfile: dockerfile, "gpuprep-requirements.txt": byHand });
  for (const check of [image!, torch!, torchvision!, numpy!]) silent(check, good);
  const asInProject = outcome({
    Dockerfile: dockerfile.replace("25.03", "26.05"),
    "gpuprep-requirements.txt": "torch==2.7.1\ntorchvision==0.22.1\nnumpy==2.2.6\n",
  });
  for (const check of [image!, torch!, torchvision!, numpy!]) fires(check, asInProject);
  const unpinned = dockerfile.replace("--format=freeze", "--format=freeze | grep -viE '^(torchvision)=='");
  fires(torchvision!, outcome({ Dockerfile: unpinned, "gpuprep-requirements.txt": byHand }));
});

test("story check: a GB10 image is 25.09 or newer, for arm64", () => {
  silent(GB10_IMAGE, outcome({ Dockerfile: "FROM nvcr.io/nvidia/pytorch:25.09-py3\n" }));
  fires(GB10_IMAGE, outcome({ Dockerfile: "FROM nvcr.io/nvidia/pytorch:25.08-py3\n" }));
});

test("story check: seed 000 stays a pixi project with a torch that runs on GB10", () => {
  const before = {
    "pixi.toml": readFileSync(join(examplesDir, "seed-000-virnucpro-pixi", "pixi.toml"), "utf8"),
  };
  const torchRuns = pixiTorchRuns(DGX_SPARK);
  const pypi = before["pixi.toml"]
    .replace('python = "3.9.*"', 'python = "3.12.*"')
    .replace(/^pytorch = .*\n/m, "")
    .replace(
      "[tasks]",
      '[pypi-dependencies]\ntorch = { version = "==2.9.*", index = "https://download.pytorch.org/whl/cu130" }\n\n[tasks]',
    );
  const conda = before["pixi.toml"]
    .replace('cuda = "12.6"', 'cuda = "13.0"')
    .replace(/^pytorch = .*$/m, 'pytorch = { version = "==2.10.0", build = "*cuda130*" }');
  for (const pixi of [pypi, conda]) {
    const fixed = outcome({ "pixi.toml": pixi }, before, [call("pixi", "install")]);
    silent(torchRuns, fixed);
    silent(PIXI_STAYS_PIXI, fixed);
  }
  const venv = outcome({}, before, [
    call("uv", "venv", "--python", "3.9"),
    call("uv", "pip", "install", "torch"),
  ]);
  fires(torchRuns, venv);
  fires(PIXI_STAYS_PIXI, venv);
  const dropped = pypi.replace(/^biopython = .*\n/m, "");
  fires(PIXI_STAYS_PIXI, outcome({ "pixi.toml": dropped }, before, [call("pixi", "install")]));
});

test("story check: unsloth natively (Python, UV_NO_SYNC, xformers, triton)", () => {
  const [python, noSync, xformers, triton] = UNSLOTH_NATIVE;
  const pyproject = readFileSync(join(examplesDir, "seed-003-gemma3-g2p-native", "pyproject.toml"), "utf8");
  const before = { "pyproject.toml": pyproject };
  const buildX: Call = {
    ...call("uv", "pip", "install", "--no-binary", "xformers", "xformers"),
    env: { TORCH_CUDA_ARCH_LIST: "12.1" },
  };
  const setup = "export UV_NO_SYNC=1\nexport TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas\n";
  const byHand = outcome({ "SETUP.md": setup }, before, [call("uv", "sync", "--python", "3.12"), buildX]);
  for (const check of [python!, noSync!, xformers!, triton!]) silent(check, byHand);
  const today = outcome({ "SETUP.md": "uv run train.py\n" }, before, [
    call("uv", "sync", "--python", "3.14", "--no-binary-package", "triton"),
    call("uv", "pip", "install", "--no-binary", "xformers,triton", "xformers", "triton"),
  ]);
  for (const check of [python!, noSync!, xformers!, triton!]) fires(check, today);
});

test("story check: xformers and triton in a container plan", () => {
  const stage = (env: string, build: string) =>
    `FROM nvcr.io/nvidia/pytorch:25.09-py3 AS base\nFROM base AS build\nENV ${env}\nRUN pip wheel --no-binary ${build} --wheel-dir /w ${build}\n` +
    "FROM base AS app\nENV TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas\nCOPY --from=build /w /w\n";
  const plan = (dockerfile: string) => outcome({ Dockerfile: dockerfile, "compose.yaml": "services: {}\n" });
  silent(XFORMERS_FOR_12_1_CONTAINER, plan(stage('TORCH_CUDA_ARCH_LIST="12.1"', "xformers")));
  fires(XFORMERS_FOR_12_1_CONTAINER, plan(stage('TORCH_CUDA_ARCH_LIST="12.0 12.1"', "xformers")));
  silent(TRITON_NOT_SDIST_CONTAINER, plan(stage('TORCH_CUDA_ARCH_LIST="12.1"', "xformers")));
  fires(TRITON_NOT_SDIST_CONTAINER, plan(stage('TORCH_CUDA_ARCH_LIST="12.1"', "triton")));
  const noPtxas = stage('TORCH_CUDA_ARCH_LIST="12.1"', "xformers").replace(/ENV TRITON_PTXAS_PATH.*\n/, "");
  fires(TRITON_NOT_SDIST_CONTAINER, plan(noPtxas));
});

test("story check: every dependency of seed 000 installed into the image, pins kept or explained", () => {
  const before = {
    "pixi.toml": readFileSync(join(examplesDir, "seed-000-virnucpro-pixi", "pixi.toml"), "utf8"),
  };
  const dockerfile =
    "FROM nvcr.io/nvidia/pytorch:25.09-py3\nCOPY gpuprep-requirements.txt /opt/gpuprep/requirements.txt\n" +
    "RUN python3 -m pip install -r /opt/gpuprep/requirements.txt\n";
  const installed = [
    "transformers==4.45.2",
    "einops>=0.6.1",
    "networkx>=3.2",
    "biopython>=1.80",
    "numpy>=1.19,<2",
    "tqdm>=4.27",
    "scikit-learn>=1.0",
    "safetensors>=0.4.1",
    "scipy>=1.7",
    "matplotlib>=3.5",
    "pandas>=1.3",
  ];
  const why =
    "# pytorch ==2.5.1 (pixi.toml:12): no 2.5.1 build runs on sm_121; the image's torch 2.9.0a0 replaces it\n";
  const plan = (requirements: string) =>
    outcome({ Dockerfile: dockerfile, "gpuprep-requirements.txt": requirements }, before);
  const [, everyDependency, pins] = CONTAINER;
  const byHand = plan(why + installed.join("\n") + "\n");
  silent(everyDependency!, byHand);
  silent(pins!, byHand);
  fires(everyDependency!, plan(why + installed.filter((r) => !r.startsWith("biopython")).join("\n") + "\n"));
  fires(pins!, plan(why + installed.join("\n").replace("transformers==4.45.2", "transformers>=4.45") + "\n"));
  fires(pins!, plan(installed.join("\n") + "\n"));
});
