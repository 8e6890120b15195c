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
  const result = gpuprep("gpu", "RTX 5070");
  assert.equal(result.code, 2);
  assert.match(result.stderr, /gpuprep: error: unknown GPU "RTX 5070"/);
  assert.match(result.stderr, /hint: closest: .*NVIDIA GeForce RTX 5070 Ti/);
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
