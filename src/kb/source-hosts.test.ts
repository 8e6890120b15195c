/**
 * Each knowledge-base table cites the kinds of source that can state its facts (issue 29 item 4):
 * NVIDIA's pages and repositories for GPUs, toolkits and NGC images; PyTorch's index, pages and
 * repositories for torch builds; a package's own repository for its requirements and wheels;
 * gpuprep's own pages (its evidence notes, measurements, user reports). A source outside its
 * table's set is either replaced or listed below by URL with the review that kept it, and a
 * reviewed URL no longer cited leaves the list, so the list stays the set of known outliers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { isRepositoryDoc } from "./source-label.js";
import { TABLES } from "./load.js";

type Table = keyof typeof TABLES;

interface Allowed {
  /** Hosts (exact, or a suffix after a dot) whose pages the table may cite. */
  hosts: string[];
  /** github.com owners ("NVIDIA") or repositories ("pytorch/pytorch") the table may cite. */
  github: string[];
  /** Other sources, by URL, each with why it stays. */
  reviewed?: Record<string, string>;
}

const NVIDIA = ["nvidia.com"];
const PYTORCH = ["pytorch.org"];

/** A copy of an NVIDIA datasheet table on a third-party page, kept where NVIDIA's own page was not read. */
const DATASHEET_COPY =
  "a third-party copy of NVIDIA's datasheet table, cited beside NVIDIA's page where one was read; no figure rests on it alone (docs/kb-evidence/gpus.md)";

const ALLOWED: Record<Table, Allowed> = {
  archs: {
    hosts: NVIDIA,
    github: ["pytorch", "conda-forge", "vllm-project/vllm"],
    reviewed: {
      "https://michaelbommarito.com/wiki/programming/tools/gpu-compute-capability":
        "a copy of NVIDIA's CUDA GPUs list for the 12.0 GPUs, beside developer.nvidia.com/cuda-gpus",
    },
  },
  cudaToolkits: {
    hosts: NVIDIA,
    github: ["NVIDIA"],
    reviewed: {
      "https://gitlab.kitware.com/cmake/cmake/-/merge_requests/8031":
        "CMake's maintainers add sm_89/sm_90 for CUDA >= 11.8: the 11.8 target list, no NVIDIA list was read",
      "https://github.com/llvm/llvm-project/commit/0f49116e261cf5a156221b006acb677e3565fd1a":
        "clang drops sm_35/sm_37 for CUDA 12.0: the 12.x target lists' lower end, no nvcc 12.x was run",
      "https://github.com/Dao-AILab/causal-conv1d/pull/56":
        "nvcc 12.8's --list-gpu-code output quoted in a build fix: the 12.8 target list, no nvcc 12.8 was run",
      "https://github.com/galaxyproject/KegAlign/pull/38":
        "nvcc 12.9's target list quoted in a build fix: the 12.9 target list, no nvcc 12.9 was run",
    },
  },
  gpus: {
    hosts: [...NVIDIA, "aws.amazon.com"],
    github: ["NVIDIA", "pytorch", "conda-forge", "vllm-project/vllm"],
    reviewed: {
      "https://glennklockwood.com/garden/processors/A100": DATASHEET_COPY,
      "https://glennklockwood.com/garden/processors/B200": DATASHEET_COPY,
      "https://grokipedia.com/page/NVIDIA_L4_vs_L40S": DATASHEET_COPY,
      "https://www.mullet.se/product.html?product_id=355414": DATASHEET_COPY,
      "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html": DATASHEET_COPY,
      "https://zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html": DATASHEET_COPY,
      "https://michaelbommarito.com/wiki/programming/tools/gpu-compute-capability":
        "a copy of NVIDIA's CUDA GPUs list for the 12.0 GPUs, beside developer.nvidia.com/cuda-gpus",
    },
  },
  torchBuilds: {
    hosts: PYTORCH,
    github: ["pytorch"],
    reviewed: {
      "https://github.com/tinglvv/pytorch/blob/ce86c18d95ebe4de977edeb524c3953bf1e1ed95/.ci/manywheel/build_cuda.sh":
        "a fork's snapshot of pytorch's own build_cuda.sh at the 2.9 era, pinned to a commit",
      "https://github.com/nWEIdia/pytorch/blob/786e6569a94cccbdfa9b104e63371123b0c2c060/.ci/manywheel/build_cuda.sh":
        "a fork's snapshot of pytorch's own build_cuda.sh at the 2.11/2.12 era, pinned to a commit",
      "https://github.com/OpenRAL/openral/pull/167":
        "a user's get_arch_list() of the 2.9.1+cu128 aarch64 wheel: the only read of that build's list",
    },
  },
  ngcImages: {
    hosts: NVIDIA,
    github: ["NVIDIA"],
    reviewed: {
      "https://github.com/levipereira/Docker-Yolov7-Nvidia-Kit/blob/758d701787530d2c61dda09bda0c74687c3d930f/yolov7/README.md":
        "quotes NVIDIA's 23.02 release notes verbatim; the notes themselves were not read",
      "https://github.com/flashrt-project/FlashRT/blob/e33faa5838f2dceb2cb29d84db36cefb5d4c58ee/docs/deployment_rtx4090.md":
        "a project's record of the 25.10 image on an RTX 5090 (a run, usage evidence); no fact rests on it alone",
      "https://github.com/flashrt-project/FlashRT/blob/e33faa5838f2dceb2cb29d84db36cefb5d4c58ee/docker/Dockerfile":
        "the same project's Dockerfile on the 25.10 image; no fact rests on it alone",
      "https://github.com/NeuralRipper/NeuralRipper/blob/751ced3275a570a50afb3fb627bbb0629ec74f3e/RTX-5070Ti-PyTorch-Setup-Guide.md":
        "a user's first-hand report of the 25.02 image training on an RTX 5070 Ti (a run)",
      "https://github.com/broadinstitute/virnucpro-broad/blob/dddd8306391ead0995ececdb9f00a4a1d6eaae38/.planning/phases/01-environment-setup/01-02-SUMMARY.md":
        "a user's first-hand log of the 25.09 image on a DGX Spark, 2026-02-07 (a run)",
    },
  },
  extensions: {
    hosts: [],
    github: [
      "Dao-AILab/flash-attention",
      "Dao-AILab/causal-conv1d",
      "facebookresearch/xformers",
      "bitsandbytes-foundation/bitsandbytes",
      "triton-lang/triton",
      "vllm-project/vllm",
      "unslothai/unsloth",
      "deepspeedai/DeepSpeed",
      "NVIDIA/TransformerEngine",
      "state-spaces/mamba",
      "flashinfer-ai/flashinfer",
    ],
  },
  condaTorchBuilds: { hosts: [], github: ["conda-forge/pytorch-cpu-feedstock", "pytorch"] },
  wheelPythons: {
    hosts: [],
    github: ["numpy/numpy", "facebookresearch/xformers", "bitsandbytes-foundation/bitsandbytes"],
  },
  systems: { hosts: NVIDIA, github: ["NVIDIA"] },
  importChecks: { hosts: ["pypi.org"], github: ["NVIDIA"] },
  packageRequirements: {
    hosts: PYTORCH,
    github: [
      "pytorch",
      "unslothai/unsloth",
      "facebookresearch/xformers",
      "Dao-AILab/flash-attention",
      "bitsandbytes-foundation/bitsandbytes",
      "deepspeedai/DeepSpeed",
      "huggingface/accelerate",
      "huggingface/peft",
    ],
    reviewed: {
      "https://github.com/hiyouga/EasyR1/issues/27":
        "vllm 0.7.3's torch pin in pip's own resolver message, dated; vllm's requirements at the tag were not read",
      "https://github.com/LMCache/LMCache/pull/583":
        "vllm 0.8.5.post1's torch pin stated by LMCache's maintainers, dated; vllm's requirements at the tag were not read",
      "https://github.com/nvidia-cosmos/cosmos-rl/pull/183":
        "vllm 0.10.0's torch pin in an NVIDIA project's fix, dated; vllm's requirements at the tag were not read",
      "https://github.com/NovaSky-AI/SkyRL/pull/218":
        "vllm 0.10.1.1's torch pin stated in a bump, dated; vllm's requirements at the tag were not read",
    },
  },
};

/** Every source URL a table names (a row's sources, and the fields of its parts that name one). */
function citedUrls(table: Table): Set<string> {
  const json: unknown = JSON.parse(
    readFileSync(new URL(`./data/${TABLES[table].file}`, import.meta.url), "utf8"),
  );
  const urls = new Set<string>();
  const walk = (value: unknown, field: string): void => {
    if (Array.isArray(value)) value.forEach((item) => walk(item, field));
    else if (value !== null && typeof value === "object")
      for (const [key, inner] of Object.entries(value)) walk(inner, key);
    else if (typeof value === "string" && (field === "url" || field === "source")) urls.add(value);
  };
  walk(json, "");
  return urls;
}

/** Why `url` may back `table`'s facts, or null where it may not. */
function allowedBecause(table: Table, url: string): string | null {
  const rule = ALLOWED[table];
  if (isRepositoryDoc(url)) return "gpuprep's own page";
  if (rule.reviewed?.[url]) return rule.reviewed[url];
  const parsed = new URL(url);
  if (rule.hosts.some((host) => parsed.hostname === host || parsed.hostname.endsWith(`.${host}`)))
    return parsed.hostname;
  if (parsed.hostname !== "github.com") return null;
  const [owner, repository] = parsed.pathname.split("/").slice(1, 3);
  return rule.github.includes(owner!) || rule.github.includes(`${owner}/${repository}`)
    ? `${owner}/${repository}`
    : null;
}

test("every table cites only the kinds of source that can state its facts", () => {
  const outside: string[] = [];
  let checked = 0;
  for (const table of Object.keys(TABLES) as Table[])
    for (const url of citedUrls(table)) {
      checked++;
      if (allowedBecause(table, url) === null) outside.push(`${table}: ${url}`);
    }
  assert.ok(checked > 300, `only ${checked} sources were checked`);
  assert.deepEqual(outside, []);
});

test("every reviewed outlier is still cited by its table (a replaced one leaves the list)", () => {
  const stale = (Object.keys(TABLES) as Table[]).flatMap((table) =>
    Object.keys(ALLOWED[table].reviewed ?? {})
      .filter((url) => !citedUrls(table).has(url))
      .map((url) => `${table}: ${url}`),
  );
  assert.deepEqual(stale, []);
});

test("the host check refuses a source outside its table's set (it can fail)", () => {
  assert.equal(allowedBecause("torchBuilds", "https://github.com/lightvector/KataGo/pull/1115"), null);
  assert.equal(
    allowedBecause("torchBuilds", "https://docs.nvidia.com/cuda/curanddx/0.2.4/release_notes.html"),
    null,
  );
  assert.equal(allowedBecause("cudaToolkits", "https://github.com/llvm/llvm-project/pull/156857"), null);
  assert.equal(allowedBecause("gpus", "https://example.com/h100"), null);
  assert.equal(allowedBecause("gpus", "https://evil-nvidia.com/h100"), null);
  assert.equal(
    allowedBecause("torchBuilds", "https://download.pytorch.org/whl/cu130/torch/"),
    "download.pytorch.org",
  );
  assert.equal(
    allowedBecause("cudaToolkits", "docs/measurements/2026-11-27-nvcc-13.0.md"),
    "gpuprep's own page",
  );
});
