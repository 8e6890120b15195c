import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-cli-")); // no overlay: packaged data only

function gpuprep(...args: string[]) {
  const result = spawnSync(process.execPath, [cli, "kb", ...args], {
    encoding: "utf8",
    env: { ...process.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("kb gpu: the nvidia-smi name, with dense peaks and sources", () => {
  const result = gpuprep("gpu", "NVIDIA H100 80GB HBM3");
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /compute capability {2}9\.0 \(sm_90\), Hopper/);
  assert.match(result.stdout, /BF16 989\.5 TFLOP\/s/);
  assert.match(result.stdout, /sources:\n {2}[^,\n]+, https:\/\//);
  const json = JSON.parse(gpuprep("gpu", "gb10", "--json").stdout);
  assert.equal(json.schema, "gpuprep.kb");
  assert.equal(json.schemaVersion, 2);
  assert.equal(json.topic, "gpu");
  assert.equal(json.result.gpu.computeCapability, "12.1");
  assert.equal(json.result.gpu.hostCpuArch, "aarch64");
});

test("kb gpu: per-precision peaks, dense and sparse as NVIDIA states them, with their sources", () => {
  const result = gpuprep("gpu", "RTX 5070 Ti");
  assert.equal(result.code, 0, result.stderr);
  // The whitepaper's Table 5 (dense column) and the compare page's sparse FP4 (issue 27 item 4).
  assert.match(result.stdout, /dense peaks {9}BF16 87\.9 TFLOP\/s, FP16 87\.9 TFLOP\/s, TF32 not sourced/);
  assert.match(
    result.stdout,
    /per precision {7}FP32 43\.9 dense; BF16 87\.9 dense; .*FP4 703 dense, 1406 sparse/,
  );
  assert.match(result.stdout, /graphics-cards\/compare\/ \(.*1406/);
  // Where NVIDIA's sparse figure was read and its dense one was not, the dense one says so.
  assert.match(gpuprep("gpu", "RTX 5080").stdout, /FP4 1801 sparse \(dense not sourced\)/);
  const hopper = gpuprep("gpu", "NVIDIA H100 80GB HBM3").stdout;
  assert.match(hopper, /BF16 989\.5 dense, 1979 sparse/);
  assert.match(hopper, /NVFP4 not on this architecture/);
});

test("kb gpu: an unknown name is a one-line error with the closest matches", () => {
  const result = gpuprep("gpu", "RTX 5050");
  assert.equal(result.code, 2);
  assert.match(result.stderr, /gpuprep: error: unknown GPU "RTX 5050"/);
  assert.match(result.stderr, /hint: closest: .*NVIDIA GeForce RTX 5070/);
  // a module family without the module: the variants to choose from
  const orin = gpuprep("gpu", "Jetson Orin NX");
  assert.equal(orin.code, 2);
  assert.match(orin.stderr, /closest: Jetson Orin NX 16GB, Jetson Orin NX 8GB/);
});

test("kb gpu: a name like nothing known hints readable names, each of which kb gpu takes, never internal keys", () => {
  const result = gpuprep("gpu", "notagpu");
  assert.equal(result.code, 2);
  const hint = /hint: try a name as nvidia-smi prints it or one of (.*) …, or a capability/.exec(
    result.stderr,
  );
  assert.ok(hint, result.stderr);
  const names = hint[1]!.split(", ");
  assert.ok(names.length >= 10, hint[1]);
  for (const expected of ["DGX Spark", "RTX 5090", "H100", "T4"])
    assert.ok(names.includes(expected), hint[1]);
  for (const name of names) {
    assert.match(name, /[A-Z]/, `${name}: a compact internal key`);
    assert.equal(gpuprep("gpu", name).code, 0, `kb gpu "${name}" does not resolve`);
  }
});

test("kb gpu: RTX 5070 is known (nvidia-smi memory too); Rubin is 10.7 with its arch row", () => {
  const rtx = JSON.parse(gpuprep("gpu", "RTX 5070", "--json").stdout);
  assert.equal(rtx.result.gpu.name, "NVIDIA GeForce RTX 5070");
  assert.equal(rtx.result.gpu.computeCapability, "12.0");
  assert.equal(rtx.result.gpu.nvidiaSmiMemoryMiB, 12227);
  const rubin = gpuprep("gpu", "rubin");
  assert.equal(rubin.code, 0, rubin.stderr);
  assert.match(rubin.stdout, /compute capability {2}10\.7 \(sm_107\), Rubin/);
  const json = JSON.parse(gpuprep("gpu", "rubin", "--json").stdout);
  assert.equal(json.result.gpu.computeCapability, "10.7");
  assert.equal(json.result.arch.computeCapability, "10.7");
  assert.equal(json.result.arch.architecture, "Rubin");
});

test("kb cuda / torch: versions with reasons; unknown versions list the known ones", () => {
  const cuda = gpuprep("cuda", "13.0");
  assert.equal(cuda.code, 0, cuda.stderr);
  assert.match(cuda.stdout, /580\.65\.06 or newer/);
  assert.doesNotMatch(cuda.stdout, /sm_70/);
  const torch = gpuprep("torch", "2.5.1", "--json");
  const builds = (
    JSON.parse(torch.stdout) as { result: Array<{ variant: string; platform: string; pypiDefault: boolean }> }
  ).result;
  // PyPI's 2.5 wheel is cu124 on x86_64 and the CPU build on aarch64 (CUDA aarch64 wheels reach PyPI with 2.11).
  assert.deepEqual(
    builds.filter((row) => row.pypiDefault).map((row) => `${row.variant} ${row.platform}`),
    ["cu124 linux-x86_64", "cpu linux-aarch64"],
  );
  const torch29 = JSON.parse(gpuprep("torch", "2.9", "--json").stdout).result as Array<{
    variant: string;
    platform: string;
  }>;
  assert.ok(torch29.some((row) => row.variant === "cu129" && row.platform === "linux-x86_64"));
  const unknown = gpuprep("torch", "1.11");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /known releases: 1\.12, 1\.13, 2\.0, 2\.1/);
  assert.match(gpuprep("cuda", "10.1").stderr, /known: 10\.2, 11\.3, 11\.6, 11\.7/);
  // torch 1.13 and CUDA 13.4 answer with their sources.
  const torch113 = gpuprep("torch", "1.13");
  assert.match(
    torch113.stdout,
    /cu117 +linux-x86_64 +sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 .*PyPI default/,
  );
  assert.match(
    torch113.stdout,
    /github\.com\/pytorch\/builder\/blob\/d08f22640ad6f332026f26242d458b8d157187be/,
  );
  const cuda134 = gpuprep("cuda", "13.4");
  assert.match(cuda134.stdout, /615 or newer runs it natively/);
  assert.match(cuda134.stdout, /sm_107/);
  assert.match(cuda134.stdout, /docs\.nvidia\.com\/cuda\/archive\/13\.4\.1/);
});

test("kb resolve: GB10 + driver 580 + aarch64 + Python 3.12", () => {
  const text = gpuprep(
    "resolve",
    "--gpu",
    "dgx spark",
    "--driver",
    "580",
    "--arch",
    "aarch64",
    "--python",
    "3.12",
  );
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /NVIDIA GB10 \(12\.1\), driver 580, aarch64, Python 3\.12/);
  assert.match(
    text.stdout,
    /torch 2\.\d+ cu130 {2}pip install "torch==2\.\d+\.\*" --index-url https:\/\/download\.pytorch\.org\/whl\/cu130/,
  );
  assert.match(text.stdout, /sm_120 SASS runs natively on compute capability 12\.1/);
  const json = JSON.parse(
    gpuprep("resolve", "--gpu", "NVIDIA B200", "--driver", "535.230.02", "--json").stdout,
  );
  assert.deepEqual(json.result.torch.choices, []);
  const bad = gpuprep("resolve", "--gpu", "h100", "--driver", "latest");
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--driver needs a driver version/);
});

test("kb resolve: an RTX 5090 on driver 570 gets CUDA 12.8/12.9 builds and no cu130", () => {
  const json = JSON.parse(
    gpuprep("resolve", "--gpu", "NVIDIA GeForce RTX 5090", "--driver", "570", "--json").stdout,
  );
  const variants = (json.result.torch.choices as Array<{ build: { variant: string } }>).map(
    (choice) => choice.build.variant,
  );
  assert.ok(variants.length > 0);
  assert.ok(
    variants.every((variant) => variant === "cu128" || variant === "cu129"),
    variants.join(),
  );
  assert.ok(variants.includes("cu129"));
  const gb300 = gpuprep("resolve", "--gpu", "NVIDIA GB300", "--driver", "580.95.05");
  assert.equal(gb300.code, 0, gb300.stderr);
  assert.match(gb300.stdout, /NVIDIA GB300 \(10\.3\), driver 580\.95\.05, aarch64/);
  assert.match(gb300.stdout, /sm_100 SASS runs natively on compute capability 10\.3/);
});

test("kb ngc TAG: every field, 'not sourced' where null and never '?'; the --help example answers", () => {
  const example = gpuprep("ngc", "25.01");
  assert.equal(example.code, 0, example.stderr);
  assert.match(example.stdout, /nvcr\.io\/nvidia\/pytorch:25\.01-py3/);
  assert.match(
    example.stdout,
    /torch {11}2\.6\.0a0\+ecf3bae40a\.nv25\.01 \(as torch\.__version__ prints it\)/,
  );
  assert.match(example.stdout, /driver {10}570\.26 or newer \(the GA driver of CUDA 12\.8\)/);
  // No arch list is sourced for 25.01: its first-hand runs say where it runs.
  assert.match(
    example.stdout,
    /runs on {9}linux\/amd64: 8\.9 a first-hand run, 9\.0 a first-hand run, 12\.0 a first-hand run/,
  );
  assert.match(example.stdout, /Jetson -igpu: 8\.7 JetPack\*/);
  for (const tag of ["23.02", "24.07", "25.10", "26.05", "26.09"]) {
    const text = gpuprep("ngc", tag);
    assert.equal(text.code, 0, text.stderr);
    for (const field of [
      "torch",
      "CUDA",
      "driver",
      "Ubuntu",
      "Python",
      "numpy",
      "platforms",
      "GPU floor",
      "exceptions",
      "runs",
      "runs on",
      "arch lists",
      "packages",
      "pip constraints",
    ])
      assert.match(text.stdout, new RegExp(`^  ${field} `, "m"), `${tag}: ${field}`);
    assert.doesNotMatch(text.stdout, /\?/, tag);
  }
  assert.match(
    gpuprep("ngc", "25.10").stdout,
    /driver {10}580 or newer \(CUDA 13\.x minor-version compatibility; CUDA 13\.0 runs natively from 580\.65\.06\)/,
  );
  assert.match(gpuprep("ngc", "26.05").stdout, /Python {10}not sourced/);
  const json = JSON.parse(gpuprep("ngc", "25.09", "--json").stdout);
  assert.equal(json.topic, "ngc");
  assert.equal(json.result.torch, "2.9.0a0+50eac811a6.nv25.09");
  assert.deepEqual(json.result.covers.aarch64, [{ computeCapability: "12.1", rule: "run" }]);
});

test("kb ngc TAG: the arch list per platform image with what it rests on, and the GPUs it runs on", () => {
  const text = gpuprep("ngc", "26.07");
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /arch lists {6}linux\/amd64: sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120 \(the image's TORCH_CUDA_ARCH_LIST "7\.5 8\.0 8\.6 9\.0 10\.0 12\.0\+PTX"\)/,
  );
  assert.match(text.stdout, /linux\/arm64: sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120 \(derived\)/);
  assert.match(text.stdout, /runs on {9}linux\/amd64: 7\.5, 8\.0, 8\.6, 8\.9, 9\.0, 10\.0, 10\.3/);
  assert.match(text.stdout, /linux\/arm64: 8\.0\*, .*11\.0\*/);
  assert.doesNotMatch(text.stdout, /index entry|\b\d{9,}\b/, "sources are printed as what they are");
  const json = JSON.parse(gpuprep("ngc", "25.10", "--json").stdout);
  assert.equal(json.result.archLists[1].basis, "image-env");
  assert.ok(
    (json.result.runsOn.arm64 as Array<{ computeCapability: string; how: string }>).some(
      (entry) => entry.computeCapability === "11.0" && entry.how === "sass",
    ),
  );
  assert.ok(
    (json.result.runsOn.igpu as Array<{ computeCapability: string }>).some(
      (entry) => entry.computeCapability === "11.0",
    ),
  );
});

test("kb gpu: the driver floor and what it rests on; a shared name lists the GPUs it stands for", () => {
  const rtx = gpuprep("gpu", "5070ti");
  assert.match(
    rtx.stdout,
    /needs driver {8}570\.26 or newer \(derived: Blackwell \(12\.0\) is supported from CUDA 12\.8/,
  );
  assert.match(rtx.stdout, /cuda-toolkit-driver-and-architecture-matrix\.html/);
  const v100 = gpuprep("gpu", "V100");
  assert.match(v100.stdout, /stands for {10}Tesla V100-SXM2-16GB; Tesla V100-SXM2-32GB/);
  assert.match(v100.stdout, /memory {14}16 GB HBM2/);
  assert.match(v100.stdout, /up to the R580 branch/);
  const json = JSON.parse(gpuprep("gpu", "dgx spark", "--json").stdout);
  assert.equal(json.result.driverFloor.minDriverLinux, "580");
  assert.equal(json.result.driverFloor.basis, "gpu-shipped");
  assert.deepEqual(json.result.variants, []);
});

test("kb pkg: requires-python and torch per release range, with sources; bad names are one line", () => {
  const unsloth = gpuprep("pkg", "unsloth", "2025.9.1");
  assert.equal(unsloth.code, 0, unsloth.stderr);
  assert.match(unsloth.stdout, />2025\.8\.10,<2026\.2\.1 +requires-python >=3\.9,<3\.14; torch none/);
  assert.match(
    unsloth.stdout,
    /github\.com\/unslothai\/unsloth\/blob\/fa3575920cd29749b593b7cbb0cb8cef64f5f783\/pyproject\.toml/,
  );
  const json = JSON.parse(gpuprep("pkg", "vllm", "0.7.3", "--json").stdout);
  assert.equal(json.topic, "pkg");
  assert.equal(json.result.torch, "==2.5.1");
  const absent = gpuprep("pkg", "left-pad");
  assert.equal(absent.code, 2);
  assert.match(absent.stderr, /no requirements of "left-pad" in the knowledge base/);
  const other = gpuprep("pkg", "vllm", "0.1.0");
  assert.equal(other.code, 2);
  assert.match(other.stderr, /no row of vllm covers 0\.1\.0/);
  assert.match(other.stderr, /known ranges: ==0\.7\.3/);
});

test("kb ngc: an unknown tag names the known ones; without a tag every row is listed", () => {
  const unknown = gpuprep("ngc", "25.07");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no NGC PyTorch image "25\.07"/);
  assert.match(unknown.stderr, /known tags: 23\.02, .*25\.06, 25\.08, .*26\.09/);
  const list = gpuprep("ngc");
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout.split("\n").filter((line) => /^ {2}\d{2}\.\d{2} /.test(line)).length, 33);
  assert.match(
    list.stdout,
    /25\.09 {2}torch 2\.9\.0a0\+50eac811a6\.nv25\.09 .* runs on amd64 -; arm64 12\.1; igpu 11\.0\*/,
  );
});

test("kb resolve: an RTX 5090 on driver 570 gets the CUDA 12.8 images, none needing R580", () => {
  const json = JSON.parse(gpuprep("resolve", "--gpu", "rtx 5090", "--driver", "570", "--json").stdout);
  const running = (json.result.ngc as Array<{ runs: boolean; image: { tag: string; cuda: string } }>).filter(
    (v) => v.runs,
  );
  assert.deepEqual(
    running.map((v) => v.image.tag),
    ["25.03", "25.02", "25.01"],
  );
  assert.ok(running.every((v) => v.image.cuda.startsWith("12.8")));
});
