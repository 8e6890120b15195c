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
  assert.match(result.stdout, /sources:\n {2}https:\/\//);
  const json = JSON.parse(gpuprep("gpu", "gb10", "--json").stdout);
  assert.equal(json.schema, "gpuprep.kb");
  assert.equal(json.schemaVersion, 1);
  assert.equal(json.topic, "gpu");
  assert.equal(json.result.gpu.computeCapability, "12.1");
  assert.equal(json.result.gpu.hostCpuArch, "aarch64");
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
  const unknown = gpuprep("torch", "1.12");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /known releases: 2\.0, 2\.1/);
  assert.match(gpuprep("cuda", "10.2").stderr, /known: 11\.7, 11\.8/);
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
  assert.match(example.stdout, /covers {10}x86_64: 8\.9, 9\.0, 12\.0/);
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
      "covers",
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

test("kb ngc: an unknown tag names the known ones; without a tag every row is listed", () => {
  const unknown = gpuprep("ngc", "25.07");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no NGC PyTorch image "25\.07"/);
  assert.match(unknown.stderr, /known tags: 23\.02, .*25\.06, 25\.08, .*26\.09/);
  const list = gpuprep("ngc");
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout.split("\n").filter((line) => /^ {2}\d{2}\.\d{2} /.test(line)).length, 32);
  assert.match(
    list.stdout,
    /25\.09 {2}torch 2\.9\.0a0\+50eac811a6\.nv25\.09 .* covers x86_64 -; aarch64 12\.1/,
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
