/**
 * The decision table of `gpuprep init`: (target, driver, CPU, project) -> (strategy, image or
 * index, torch, Python, source builds), on the packaged knowledge base and real project files read
 * by the real reader. Every row says where its expected answer comes from: the KB rows (table and
 * key) and the documented rule (docs/DESIGN.md "How init decides").
 *
 * The pixi.toml and environment.yml projects are the real fixtures under test/fixtures/projects
 * (seed 000's pixi workspace; an environment.yml on the pytorch channel with pytorch-cuda=12.1),
 * read into Facts and planned like any other project (src/plan/conda-requirements.ts).
 */
import { containerOf, nativeOf } from "../../src/plan/types.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { readProject } from "../../src/gather/project.js";
import { makePlan } from "../../src/plan/index.js";
import { targetFromName } from "../../src/plan/target.js";
import type { InitOptions, Plan } from "../../src/plan/types.js";
import { initOptions } from "../support/init-options.js";

const kb = loadKnowledgeBase();

const routedPyproject = (variant: string) =>
  `[project]\nname = "routed"\nversion = "0"\nrequires-python = ">=3.9"\ndependencies = ["torch", "torchvision"]\n\n[tool.uv.sources]\ntorch = [{ index = "pytorch" }]\ntorchvision = [{ index = "pytorch" }]\n\n[[tool.uv.index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/${variant}"\nexplicit = true\n`;

const fixture = (path: string) => readFileSync(join("test/fixtures/projects", path), "utf8");

/** The projects of the table: torch pinned low, high, exactly, through uv sources, index options or pixi/conda, or not at all. */
const PROJECTS = {
  /** torch not named at all. */
  unpinned: { "requirements.txt": "transformers\naccelerate\n" },
  low: { "requirements.txt": "torch<2.4\n" },
  high: { "requirements.txt": "torch>=2.9\n" },
  atLeast27: { "requirements.txt": "torch>=2.7\n" },
  /** The issue's RTX 5090 project. */
  exact: { "requirements.txt": "torch==2.8.0\nnumpy<2\n" },
  uvSourcesCu126: { "pyproject.toml": routedPyproject("cu126") },
  uvSourcesCu118: { "pyproject.toml": routedPyproject("cu118") },
  indexOptionCu118: { "requirements.txt": "--index-url https://download.pytorch.org/whl/cu118\ntorch\n" },
  flashAttn: { "requirements.txt": "torch\nflash-attn\n" },
  xformers: { "requirements.txt": "torch\nxformers\n" },
  /** Seed 000: conda-forge pytorch = "2.5.1", python = "3.11.*" (pixi.toml:16-17). */
  pixiSeed000: { "pixi.toml": fixture("pixi-gb10-conda-forge/pixi.toml") },
  /** pytorch::pytorch, pytorch::pytorch-cuda=12.1 (environment.yml:17), numpy<2, python>=3.9. */
  condaPytorchCuda121: { "environment.yml": fixture("conda-pytorch-channel/environment.yml") },
} satisfies Record<string, Record<string, string>>;

type Expected =
  | {
      strategy: "native";
      index: string;
      torch: string;
      python: string;
      builds: string[];
      /** Pins the plan reports as not obeyed (0 unless said). */
      conflicts?: number;
      warning?: RegExp;
    }
  | {
      strategy: "container";
      image: string;
      /** The reference pulled, where the tag alone does not say it (a Jetson's -igpu image). */
      ref?: string;
      torch: RegExp;
      builds: string[];
      conflicts?: number;
    }
  | { error: RegExp };

interface Row {
  target: string;
  driver: string | null;
  project: keyof typeof PROJECTS;
  strategy: InitOptions["strategy"];
  expect: Expected;
  source: string;
}

// Sources used by many rows, named once.
const SASS_NEWEST =
  "rule: native = the newest torch whose wheel has SASS for the GPU and whose CUDA the driver runs (kb.evaluateTorchBuilds rank: SASS, newest torch, PyPI default, native driver, newest CUDA)";
const PY_NEWEST =
  "rule: Python = newest of the build's pythons that requires-python and pinned compiled packages allow";
const NUMPY_LT2 =
  "wheel-pythons numpy 1.26.x (numpy@93fdebfc wheels.yml: cp39-cp312): numpy<2 caps Python at 3.12";
const T214_CU130 =
  "torch-builds 2.14 cu130 (sm_75…sm_120 x86_64; sm_80…sm_120 incl. sm_110 aarch64; pythons 3.10-3.14)";
const T214_CU126 = "torch-builds 2.14 cu126 linux-x86_64 (sm_50…sm_90, pythons 3.10-3.14)";
/** Issue 22 item 2: a pin no build on the GPU satisfies is changed once, to the nearest series a wheel with code for it exists for; both plans make that change. */
const PIN_POLICY =
  "rule: a torch pin no build on this GPU satisfies is changed once to the nearest release series a wheel runs for (plan/torch-pin-policy.ts), the same change in container and native plans, reported as a diff of the line";
const CUDA130 = "cuda-toolkits 13.0 (GA driver 580.65.06; a bare 580 branch counts as its newest patch)";
const T28_CU128 = "torch-builds 2.8 cu128 linux-x86_64 (sm_70…sm_120, pythons 3.9-3.13, PyPI default)";
const FLASH =
  "extensions flash-attn: distribution github-releases+source, no index wheel -> source build; buildEnv FLASH_ATTN_CUDA_ARCHS values 80/90/100/120 (setup.py@ea6443c7)";

/** docs/knowledge-base.md "NGC images": which platform image runs where (kb.ngcImageVerdicts), and which one a container plan takes. */
const NGC_VERDICT =
  "rule: an NGC platform image runs on a GPU where it is published and its torch arch list (read, or derived between two tags that agree) has a cubin for the GPU, or a first-hand run on that capability and CPU ran; a driver below its floor (CUDA 13.x images: 580, minor-version compatibility) does not run it; the plan takes the newest one the pin accepts that the driver runs natively (at or above its CUDA's GA driver), else the newest that runs";
const NGC_2511 =
  "ngc 25.11 (torch 2.10.0a0+b558c986e8, CUDA 13.0, floor 580): arch lists derived between the sourced 25.10 and 26.07 (amd64: sm_80 sm_86 sm_90 sm_100 sm_120 compute_120) and 25.10 and 26.08 (arm64: the same plus sm_110); 25.12 and newer carry CUDA 13.1 or later, which 580 runs only under minor-version compatibility";
/** Issue 22 item 5: where some requirement's Pythons are not known, stay one minor below the newest Python that fits. */
const STEP_DOWN = (names: string) =>
  `rule: Python = one minor below the newest that fits where some requirement's Pythons are not known (plan/choose-python.ts; issue 22 item 5): ${names} no row in wheel-pythons`;

/** Issue 22 item 5: a dependency whose requires-python the KB knows (package-requirements) is no unknown. */
const KNOWN_PY = (name: string, spec: string) =>
  `rule: Python = the newest that fits; ${name}'s requires-python (${spec}) is known (package-requirements: all its rows agree), so no step-down`;

const ROWS: Row[] = [
  // --- Volta / Turing
  {
    target: "v100",
    driver: "535",
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.13", builds: [] },
    source: `${T214_CU126}: the newest wheel with sm_70 (cu128+ x86 rows from 2.11 and every cu130 row drop sm_70); cuda-toolkits 12.6 minor-compat floor 525.60.13 <= 535; ${SASS_NEWEST}; ${STEP_DOWN("transformers and accelerate (requirements.txt) have")}: 3.13, not 3.14`,
  },
  {
    target: "v100",
    driver: "535",
    project: "low",
    strategy: "native",
    expect: { strategy: "native", index: "cu121", torch: "2.3", python: "3.12", builds: [] },
    source: `torch<2.4 accepts 2.0-2.3; torch-builds 2.3 cu121 (sm_70, PyPI default, pythons 3.8-3.12) ranks over 2.3 cu118; ${PY_NEWEST}`,
  },
  {
    target: "t4",
    driver: "550",
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.13", builds: [] },
    source: `${T214_CU126} has sm_75 and 2.14 cu130 too, but cuda-toolkits 13.0 needs 580 (13.x minor-compat floor 580) > 550; cu126 runs under 12.x minor-compat (525.60.13); ${SASS_NEWEST}; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "t4",
    driver: "550",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `torch==2.8.0 keeps the 2.8 series; ${T28_CU128} ranks first (PyPI default); ${NUMPY_LT2}`,
  },
  {
    target: "t4",
    driver: "550",
    project: "uvSourcesCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu118", torch: "2.7", python: "3.13", builds: [] },
    source:
      "project route pyproject [tool.uv.sources] -> /whl/cu118 is a variant pin: kept where a cu118 build runs; torch-builds 2.7 cu118 (newest cu118 row, sm_75, pythons 3.9-3.13); cuda-toolkits 11.8 minor-compat 450.80.02 <= 550",
  },
  // --- Ampere
  {
    target: "a100",
    driver: "580",
    project: "atLeast27",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `${T214_CU130} has sm_80; ${CUDA130}; torch>=2.7 accepts 2.14; ${SASS_NEWEST}; ${PY_NEWEST}`,
  },
  {
    target: "a100",
    driver: "580",
    project: "uvSourcesCu126",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: [] },
    source: `project route -> /whl/cu126 kept: ${T214_CU126} has sm_80 and 580 runs CUDA 12.6`,
  },
  {
    target: "a10",
    driver: "570",
    project: "indexOptionCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu118", torch: "2.7", python: "3.13", builds: [] },
    source:
      "requirements.txt --index-url /whl/cu118 is a variant pin, kept: torch-builds 2.7 cu118 has sm_86 (newest cu118 row), pythons 3.9-3.13",
  },
  {
    target: "a10",
    driver: "570",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${T214_CU126} (cu130 needs 580 > 570); ${FLASH} (8.6 builds sm_80, which runs on 8.6); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "rtx-3090",
    driver: "535",
    project: "low",
    strategy: "native",
    expect: { strategy: "native", index: "cu121", torch: "2.3", python: "3.12", builds: [] },
    source:
      "torch<2.4 -> 2.3; torch-builds 2.3 cu121 has sm_86 (PyPI default); cuda-toolkits 12.1 minor-compat 525.60.13 <= 535",
  },
  {
    target: "rtx-3090",
    driver: "535",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `${T28_CU128} (sm_86; CUDA 12.8 under 12.x minor-compat on 535); ${NUMPY_LT2}`,
  },
  // --- Ada
  {
    target: "l4",
    driver: "580",
    project: "high",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `${T214_CU130}: sm_86 SASS runs on 8.9 (same major, lower minor; compat.ts cubin rule); ${CUDA130}`,
  },
  {
    target: "l4",
    driver: "580",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `${T28_CU128}; ${NUMPY_LT2}`,
  },
  {
    target: "l40s",
    driver: "570",
    project: "xformers",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: [] },
    source:
      "extensions xformers 0.0.35 builds carry sm_89 for linux-x86_64 (verdict prebuilt, no build); wheel-pythons xformers 0.0.35 py39-none (any Python >= 3.9); torch 2.14 cu126 (cu130 needs 580)",
  },
  {
    target: "l40s",
    driver: "570",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${FLASH} (8.9 builds sm_80); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "rtx-4090",
    driver: "560",
    project: "atLeast27",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: [] },
    source: `${T214_CU126}: cuda-toolkits 12.6 GA driver 560.28.03 (a bare 560 is its newest patch); cu130 needs 580`,
  },
  {
    target: "rtx-4090",
    driver: "560",
    project: "uvSourcesCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu118", torch: "2.7", python: "3.13", builds: [] },
    source: "project route -> cu118 kept: torch-builds 2.7 cu118 has sm_86 (runs on 8.9) and sm_90",
  },
  // --- Hopper
  {
    target: "h100",
    driver: "580.159.04",
    project: "atLeast27",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `${T214_CU130}; driver 580.159.04 captured on the H100 (docs/measurements); ${CUDA130}`,
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `${T28_CU128}; ${NUMPY_LT2}`,
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "low",
    strategy: "native",
    expect: { strategy: "native", index: "cu121", torch: "2.3", python: "3.12", builds: [] },
    source: "torch<2.4 -> 2.3; torch-builds 2.3 cu121 has sm_90, PyPI default, pythons to 3.12",
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "uvSourcesCu126",
    strategy: "auto",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: [] },
    source:
      "rule: auto prefers the plan that keeps every pin: the image that would be taken (ngc 25.11) does not use the [tool.uv.sources] routes of torch and torchvision to cu126, both reported, while native keeps them; torch-builds 2.14 cu126 has sm_90",
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "indexOptionCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu118", torch: "2.7", python: "3.13", builds: [] },
    source: "requirements --index-url /whl/cu118 kept: torch-builds 2.7 cu118 has sm_90",
  },
  {
    target: "h200",
    driver: "580",
    project: "uvSourcesCu126",
    strategy: "native",
    expect: { strategy: "native", index: "cu126", torch: "2.14", python: "3.14", builds: [] },
    source: `project route -> cu126 kept; ${T214_CU126} has sm_90`,
  },
  {
    target: "h200",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${T214_CU130}; ${FLASH} (9.0 builds sm_90); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "gh200",
    driver: "580",
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.13", builds: [] },
    source: `gpus GH200 hostCpuArch aarch64; ${T214_CU130} aarch64 has sm_90; cu132 needs 595 natively (only minor-compat on 580), so cu130 ranks first; ${CUDA130}; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "gh200",
    driver: "580",
    project: "xformers",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["xformers"] },
    source: `extensions xformers platforms linux-x86_64 and windows-x86_64 only -> source build on linux-aarch64 (kb.extensionVerdicts); ${KNOWN_PY("xformers", ">=3.9")} for linux-aarch64 (its two rows are linux-x86_64 wheels)`,
  },
  {
    target: "gh200",
    driver: "580",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.9", python: "3.12", builds: [], conflicts: 1 },
    source: `torch==2.8.0: the KB has no 2.8 linux-aarch64 CUDA build (torch-builds), so the pin cannot be kept; the aarch64 series with sm_90 are 2.4, 2.6 and 2.9 on, and 2.9 is the nearest (one minor away, 2.6 two); ${PIN_POLICY}; ${NUMPY_LT2} (numpy 1.26 has aarch64 wheels, cirrus_wheels.yml)`,
  },
  // --- Blackwell datacenter
  {
    target: "b200",
    driver: "570.133.20",
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.11", python: "3.13", builds: [] },
    source: `gpus HGX B200 minDriverLinux 570.133.20; torch-builds 2.11 cu128 (sm_100, CUDA 12.8 native on 570) ties 2.11 cu129 (12.9 only under minor-compat) and wins on the native driver; 2.12+ x86 rows are cu126 (no sm_100), cu130/cu132 (need 580+); ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "b200",
    driver: "535",
    project: "unpinned",
    strategy: "native",
    expect: {
      error: /no PyTorch build runs natively on NVIDIA B200 .*driver 535 is older than 570\.133\.20/,
    },
    source:
      "gpus HGX B200 minDriverLinux 570.133.20 (GPU Operator platform-support docs): every build is refused below it",
  },
  {
    target: "b200",
    driver: "580",
    project: "low",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.7", python: "3.13", builds: [], conflicts: 1 },
    source: `torch<2.4: no torch-builds row before 2.7 cu128 has sm_100, so the pin is changed to 2.7, the nearest series that runs; ${PIN_POLICY}`,
  },
  {
    target: "b300",
    driver: "580",
    project: "high",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `${T214_CU130}: sm_100 SASS runs on 10.3 (cubin rule; 10.3 is not an exception in compat.ts)`,
  },
  {
    target: "b300",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${FLASH} (10.3 builds sm_100); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "gb200",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `gpus GB200 aarch64; ${T214_CU130} aarch64 has sm_100; ${FLASH}; ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "gb200",
    driver: "580",
    project: "uvSourcesCu126",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [], conflicts: 1 },
    source:
      "project route -> cu126: torch-builds 2.14 cu126 linux-aarch64 has only sm_80 and sm_90, nothing for 10.0, so the route is replaced and reported",
  },
  // --- Blackwell RTX
  {
    target: "rtx-5070",
    driver: "580",
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `gpus RTX 5070 (12.0, kb-rows); ${T28_CU128} has sm_120; ${NUMPY_LT2}`,
  },
  {
    target: "rtx-5070",
    driver: "580",
    project: "low",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.7", python: "3.13", builds: [], conflicts: 1 },
    source: `torch<2.4: sm_120 first appears in torch-builds 2.7 cu128, so the pin is changed to 2.7; ${PIN_POLICY}`,
  },
  {
    target: "rtx-5070-ti",
    driver: "575",
    project: "atLeast27",
    strategy: "native",
    expect: { strategy: "native", index: "cu129", torch: "2.11", python: "3.12", builds: [] },
    source:
      "torch-builds 2.11 cu129 linux-x86_64 (sm_120, pythons 3.10-3.12, secondary) is the newest build CUDA 12.x on driver 575 runs; cu130 needs 580",
  },
  {
    target: "rtx-5070-ti",
    driver: "575",
    project: "uvSourcesCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu129", torch: "2.11", python: "3.12", builds: [], conflicts: 1 },
    source: "project route -> cu118: no cu118 row has sm_120 (torch-builds), so it is replaced and reported",
  },
  {
    target: "rtx-5090",
    driver: "580",
    project: "exact",
    strategy: "auto",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `the issue's case. No NGC torch equals 2.8.0 (ngc 25.08 brings 2.8.0a0, a pre-release; 25.10 2.9.0a0): rule: an image that fails the torch pin is never chosen in auto, which keeps every pin; ${T28_CU128}; ${NUMPY_LT2}`,
  },
  {
    target: "rtx-5090",
    driver: "580",
    project: "exact",
    strategy: "container",
    expect: {
      strategy: "container",
      image: "25.08",
      torch: /^2\.8\.0a0\+34c6371d24/,
      builds: [],
      conflicts: 1,
    },
    source:
      "issue 22 item 2: every NGC torch is a pre-release (2.x.0a0+...), which never equals 2.8.0; asked for a container, the plan takes the image of the pin's minor (or the nearest newer) and moves the pin out of the installed requirements, saying why: ngc 25.08 brings torch 2.8.0a0+34c6371d24 and its linux/amd64 arch list (derived between the sourced 25.04 and 25.10: sm_75 … sm_120 compute_120) has sm_120; CUDA 13.0 runs natively on 580",
  },
  {
    target: "rtx-5090",
    driver: "580",
    project: "indexOptionCu118",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [], conflicts: 1 },
    source: "requirements --index-url cu118: no cu118 row has sm_120, so the route is reported as not obeyed",
  },
  {
    target: "rtx-5090",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${FLASH} (12.0 builds sm_120); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  {
    target: "rtx-pro-6000",
    driver: "580",
    project: "high",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `gpus RTX PRO 6000 Blackwell (12.0); ${T214_CU130}`,
  },
  {
    target: "rtx-pro-6000",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["flash-attn"] },
    source: `${FLASH}; ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  // --- GB10 (DGX Spark), named system
  {
    target: "dgx-spark",
    driver: null,
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.13", builds: [] },
    source: `systems DGX Spark driver 580.82.09 (NVIDIA playbook capture) is used without --driver; ${T214_CU130} aarch64: sm_120 SASS runs on 12.1; cu132 needs 595; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "xformers",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: ["xformers"] },
    source: `systems DGX Spark driver; extensions xformers has no linux-aarch64 platform -> source build; ${KNOWN_PY("xformers", ">=3.9")} for linux-aarch64`,
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "exact",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.9", python: "3.12", builds: [], conflicts: 1 },
    source: `no 2.8 linux-aarch64 CUDA row in torch-builds: torch==2.8.0 cannot be kept on GB10, so it is changed to 2.9, the nearest aarch64 series with code for 12.1 (2.9 on: sm_120; 2.4/2.6 aarch64 carry only sm_90); ${PIN_POLICY}; ${NUMPY_LT2}`,
  },
  // --- Jetson
  {
    target: "orin",
    driver: null,
    project: "unpinned",
    strategy: "auto",
    expect: {
      strategy: "container",
      image: "25.06",
      ref: "nvcr.io/nvidia/pytorch:25.06-py3-igpu",
      torch: /^2\.8\.0a0\+5228986c39/,
      builds: [],
    },
    source: `issue 22 item 3: Jetson -igpu images are planned. No wheel runs on 8.7 (compat.ts: sm_80/sm_86 cubins do not run on a Tegra 8.7; no aarch64 row has sm_87) and no arm64 image does (SBSA CUDA before 13, and from 13 only on Thor), so auto takes the container: ngc 25.06-py3-igpu, the newest tag whose JetPack (6.2, NVIDIA's Jetson table) runs 8.7 (JetPack 7.x -igpu images are for Thor); ${NGC_VERDICT}`,
  },
  {
    target: "jetson-thor",
    driver: null,
    project: "unpinned",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.13", builds: [] },
    source: `systems Jetson AGX Thor: driver not sourced, so planned as for an unknown driver: the newest torch on the oldest CUDA it has sm_110 code for (issue 22 item 5; the plan states the driver it needs); torch-builds 2.14 cu130 aarch64 has sm_110; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "jetson-thor",
    driver: "580",
    project: "flashAttn",
    strategy: "native",
    expect: {
      strategy: "native",
      index: "cu130",
      torch: "2.14",
      python: "3.14",
      builds: [],
      warning:
        /flash-attn: its build compiles only sm_80, sm_90, sm_100, sm_120 .* none of which runs on compute capability 11\.0: a source build cannot serve this GPU, so none is planned/,
    },
    source: `${FLASH}: none of 80/90/100/120 runs on 11.0 (compat.ts: sm_100 does not run on Thor); issue 22 item 7: a build gpuprep warns cannot serve the GPU is not planned, so flash-attn is not built (the warning says so); ${KNOWN_PY("flash-attn", ">=3.9")}`,
  },
  // --- containers and auto on the NGC rows (kb-ngc)
  {
    target: "h100",
    driver: "580.159.04",
    project: "atLeast27",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0\+b558c986e8/, builds: [] },
    source: `the issue's new user. ${NGC_VERDICT}; ${NGC_2511}: 580.159.04 runs CUDA 13.0 natively (GA 580.65.06) and torch 2.10.0a0 satisfies >=2.7, so 25.11 over the newer 25.12 … 26.08`,
  },
  {
    target: "l4",
    driver: "580",
    project: "atLeast27",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: its sm_86 cubin runs on 8.9 (same major, higher minor)`,
  },
  {
    target: "a100",
    driver: "580",
    project: "atLeast27",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: sm_80 in its amd64 arch list; CUDA 13.0 native on 580`,
  },
  {
    target: "a100",
    driver: "580",
    project: "unpinned",
    strategy: "auto",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.13", builds: [] },
    source: `rule: auto takes a container only within two torch minor releases of native (docs/DESIGN.md); the image chosen for 8.0 on 580 is ngc 25.11 (torch 2.10.0a0: ${NGC_2511}), 4 behind torch-builds 2.14 cu130; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "h200",
    driver: "580",
    project: "high",
    strategy: "auto",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.14", builds: [] },
    source: `${NGC_VERDICT}: torch>=2.9 accepts ngc 25.11 (torch 2.10.0a0), the newest image 580 runs natively on 9.0 (${NGC_2511}); it is 4 minor releases behind torch-builds 2.14 cu130, more than the two auto allows, so native; ${PY_NEWEST}`,
  },
  {
    target: "b200",
    driver: "580",
    project: "unpinned",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0\+b558c986e8/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: sm_100 in its amd64 arch list, CUDA 13.0 native on 580`,
  },
  {
    target: "b300",
    driver: "580",
    project: "unpinned",
    strategy: "auto",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.13", builds: [] },
    source: `rule: lag > 2 minor releases -> native: the newest image 580 runs natively on 10.3 is ngc 25.11 (torch 2.10.0a0; its sm_100 cubin runs on 10.3), 4 behind ${T214_CU130}; ${STEP_DOWN("transformers and accelerate have")}`,
  },
  {
    target: "gb200",
    driver: "580",
    project: "unpinned",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: sm_100 in its linux/arm64 arch list, CUDA 13.0 native on 580 (25.10 ran on a GB200 too, first-hand)`,
  },
  {
    target: "gh200",
    driver: "580",
    project: "unpinned",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `issue 22 item 3 (containers were refused where they run): ${NGC_VERDICT}; ${NGC_2511}: sm_90 in its linux/arm64 arch list, CUDA 13.0 native on 580`,
  },
  {
    target: "t4",
    driver: "550",
    project: "unpinned",
    strategy: "container",
    expect: { strategy: "container", image: "23.02", torch: /^1\.14\.0a0/, builds: [] },
    source:
      "ngc 23.02: 'compute capability 6.0 and later' (sourced floor) with CUDA 12.0 compiling sm_75; driver floor 525 <= 550. The newer images whose arch lists carry sm_75 (25.04 … 25.10, 26.07, 26.08) need 575.51.03 (CUDA 12.9) or 580 (13.x), and no other image has a 7.5 run",
  },
  {
    target: "rtx-3090",
    driver: "535",
    project: "exact",
    strategy: "auto",
    expect: { strategy: "native", index: "cu128", torch: "2.8", python: "3.12", builds: [] },
    source: `no NGC torch equals 2.8.0 (all are 2.x.0a0 pre-releases), so no image keeps the exact pin; ${T28_CU128}; ${NUMPY_LT2}`,
  },
  {
    target: "rtx-5090",
    driver: "580",
    project: "atLeast27",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: sm_120 in its amd64 arch list, CUDA 13.0 native on 580; 26.01 … 26.08 (CUDA 13.1+) only under minor-compat`,
  },
  {
    target: "rtx-pro-6000",
    driver: "580",
    project: "high",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0/, builds: [] },
    source: `${NGC_VERDICT}; ${NGC_2511}: sm_120 runs on the RTX PRO 6000 Blackwell (12.0); torch 2.10.0a0 satisfies >=2.9 (25.10's 2.9.0a0 does not: a pre-release)`,
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "unpinned",
    strategy: "container",
    expect: { strategy: "container", image: "25.11", torch: /^2\.10\.0a0\+b558c986e8/, builds: [] },
    source: `systems DGX Spark driver 580.82.09; ${NGC_VERDICT}; ${NGC_2511}: sm_120 in its linux/arm64 arch list runs on 12.1 (and a first-hand GB10 run ran), CUDA 13.0 native on 580.82.09`,
  },
  {
    target: "jetson-thor",
    driver: "580",
    project: "unpinned",
    strategy: "container",
    expect: {
      strategy: "container",
      image: "26.02",
      ref: "nvcr.io/nvidia/pytorch:26.02-py3-igpu",
      torch: /^2\.11\.0a0\+eb65b36914/,
      builds: [],
    },
    source: `${NGC_VERDICT}; an -igpu image runs on its JetPack's own driver, so it counts as native: ngc 26.02-py3-igpu (JetPack 7.1, which runs Thor 11.0: NVIDIA's Jetson table, derived) is the newest such; the arm64 images 25.12 … 26.09 run on Thor too (arch lists with sm_110, first-hand runs) but carry CUDA 13.1+, which 580 runs only under minor-version compatibility`,
  },
  {
    target: "orin",
    driver: null,
    project: "unpinned",
    strategy: "container",
    expect: {
      strategy: "container",
      image: "25.06",
      ref: "nvcr.io/nvidia/pytorch:25.06-py3-igpu",
      torch: /^2\.8\.0a0\+5228986c39/,
      builds: [],
    },
    source: `issue 22 item 3: Jetson -igpu images are planned; ngc 25.06-py3-igpu is the newest tag whose JetPack (6.2) runs Orin 8.7 (NVIDIA's Jetson table); the plain arm64 images carry SBSA CUDA, which runs on no Jetson before CUDA 13 and from 13 only on Thor (NVIDIA's CUDA 13.0 for Jetson Thor post)`,
  },
  // --- pixi.toml and environment.yml projects (manifests read into Facts)
  {
    target: "rtx-5070",
    driver: "580",
    project: "pixiSeed000",
    strategy: "native",
    expect: { strategy: "native", index: "cu128", torch: "2.7", python: "3.11", builds: [], conflicts: 1 },
    source: `pixi.toml:17 pytorch = "2.5.1" is torch==2.5.1 (conda name -> PyPI name): sm_120 first appears in torch-builds 2.7 cu128, so the pin is changed to pytorch = "2.7.*"; ${PIN_POLICY}; pixi.toml:16 python = "3.11.*" bounds the Python as requires-python does (${PY_NEWEST})`,
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "pixiSeed000",
    strategy: "auto",
    expect: { strategy: "native", index: "cu130", torch: "2.9", python: "3.11", builds: [], conflicts: 1 },
    source: `seed 000 (pixi + conda-forge torch 2.5.1 on GB10): no 2.5 build has code for 12.1 (the only 2.5 aarch64 row is cpu), so the pin is changed to 2.9, the nearest series with an aarch64 build that runs (${PIN_POLICY}); both plans make that change, and auto prefers native, which also keeps python = "3.11.*" (the image's Python is 3.12); systems DGX Spark driver 580.82.09; sm_120 SASS runs on 12.1`,
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "pixiSeed000",
    strategy: "container",
    expect: { strategy: "container", image: "25.10", torch: /^2\.9\.0a0/, builds: [], conflicts: 2 },
    source: `seed 000's own fix, NGC 25.09 or newer: the pin is changed to 2.9 as in the native plan (${PIN_POLICY}); the newest image with torch 2.9 that covers 12.1 on aarch64 is 25.10; the image's Python 3.12 does not keep python = "3.11.*", the second pin reported`,
  },
  {
    target: "a100",
    driver: "580",
    project: "pixiSeed000",
    strategy: "native",
    expect: { strategy: "native", index: "cu124", torch: "2.5", python: "3.11", builds: [] },
    source:
      'torch==2.5.1 (pixi.toml:17) kept: torch-builds 2.5 cu124 linux-x86_64 (sm_80, PyPI default, pythons 3.9-3.12) ranks over cu121/cu118; cuda-toolkits 12.4 runs on 580; python = "3.11.*" (pixi.toml:16)',
  },
  {
    target: "dgx-spark",
    driver: null,
    project: "condaPytorchCuda121",
    strategy: "native",
    expect: { strategy: "native", index: "cu130", torch: "2.14", python: "3.11", builds: [], conflicts: 1 },
    source: `environment.yml:17 pytorch::pytorch-cuda=12.1 is a route to cu121 (torch-routes.ts): torch-builds has no cu121 linux-aarch64 row, so it is replaced and reported; systems DGX Spark driver 580.82.09; ${T214_CU130}; ${NUMPY_LT2}; ${STEP_DOWN("h5py, matplotlib, pytest, tensorboard, tqdm and the pip: packages have")}: 3.11`,
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "condaPytorchCuda121",
    strategy: "auto",
    expect: { strategy: "native", index: "cu121", torch: "2.5", python: "3.11", builds: [] },
    source: `pytorch-cuda=12.1 kept as the cu121 route: torch-builds 2.5 cu121 (newest cu121 row, sm_90, pythons 3.9-3.12); cuda-toolkits 12.1 runs on 580; rule: auto prefers the plan that keeps every pin (ngc 25.11 would not use the route); ${NUMPY_LT2}; ${STEP_DOWN("h5py, matplotlib, pytest, tensorboard, tqdm and the pip: packages have")}: 3.11`,
  },
  {
    target: "h100",
    driver: "580.159.04",
    project: "condaPytorchCuda121",
    strategy: "container",
    expect: {
      strategy: "container",
      image: "25.11",
      torch: /^2\.10\.0a0\+b558c986e8/,
      builds: [],
      conflicts: 1,
    },
    source: `${NGC_VERDICT}; ngc 25.11 as for the torch>=2.7 H100 row (pytorch is unpinned; ${NGC_2511}); the pytorch-cuda=12.1 route is not used in the image and is reported`,
  },
];

function planFor(row: Row): Plan {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-table-"));
  for (const [name, content] of Object.entries(PROJECTS[row.project]))
    writeFileSync(join(dir, name), content);
  const target = targetFromName(kb, { gpu: row.target, driver: row.driver, cpuArch: null, flag: "--target" });
  return makePlan(kb, readProject(dir), target, initOptions({ strategy: row.strategy }));
}

/** Issue 11 item 7's targets, each as `--target` names it. */
const ITEM7_TARGETS = [
  "v100",
  "t4",
  "a100",
  "a10",
  "l4",
  "l40s",
  "h100",
  "h200",
  "gh200",
  "b200",
  "b300",
  "gb200",
  "rtx-3090",
  "rtx-4090",
  "rtx-5070",
  "rtx-5070-ti",
  "rtx-5090",
  "rtx-pro-6000",
  "dgx-spark",
  "orin",
  "jetson-thor",
];

test("the decision table has at least 40 rows over every target and pin style, every one with a source", () => {
  assert.ok(ROWS.length >= 40, `${ROWS.length} rows`);
  for (const row of ROWS) assert.ok(row.source.length > 20, `${row.target} ${row.project}: no source`);
  const targets = new Set(ROWS.map((row) => row.target));
  assert.deepEqual(
    ITEM7_TARGETS.filter((t) => !targets.has(t)),
    [],
    "targets without a row",
  );
  const gpus = new Set(ROWS.map((row) => kb.gpu(row.target)?.name ?? row.target));
  assert.equal(gpus.size, ITEM7_TARGETS.length, `${gpus.size} distinct GPUs`);
  const projects = new Set(ROWS.map((row) => row.project));
  assert.deepEqual(
    Object.keys(PROJECTS).filter((p) => !projects.has(p as keyof typeof PROJECTS)),
    [],
    "projects without a row",
  );
});

for (const row of ROWS) {
  const name = `${row.target} driver ${row.driver ?? "not given"}, ${row.project}, --strategy ${row.strategy}`;
  test(name, () => {
    const expect = row.expect;
    if ("error" in expect) {
      assert.throws(() => planFor(row), expect.error, row.source);
      return;
    }
    const plan = planFor(row);
    const where = `${row.source}\ndecisions: ${plan.decisions.map((d) => `${d.topic}: ${d.choice}`).join("; ")}`;
    assert.equal(plan.strategy, expect.strategy, where);
    if (expect.strategy === "native") {
      assert.equal(nativeOf(plan)?.build.variant, expect.index, where);
      assert.equal(nativeOf(plan)?.build.torch, expect.torch, where);
      assert.equal(nativeOf(plan)?.python, expect.python, where);
      if (expect.warning)
        assert.ok(
          plan.warnings.some((w) => expect.warning!.test(w)),
          `${where}\nwarnings: ${plan.warnings.join("; ")}`,
        );
    } else {
      assert.equal(containerOf(plan)?.image.tag, expect.image, where);
      if (expect.ref) assert.equal(containerOf(plan)?.ref, expect.ref, where);
      assert.match(containerOf(plan)?.image.torch ?? "", expect.torch, where);
    }
    assert.deepEqual(
      plan.sourceBuilds.map((b) => b.name),
      expect.builds,
      where,
    );
    assert.equal(
      plan.conflicts.length,
      expect.conflicts ?? 0,
      `${where}\n${plan.conflicts.map((c) => c.message).join("\n")}`,
    );
  });
}
