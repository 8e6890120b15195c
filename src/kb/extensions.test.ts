import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import type { ExtensionPlatform } from "./types.js";
import { asCapability } from "../../test/support/capability.js";

const data = loadPackagedData();
const kb = new KnowledgeBase(data);

/** name -> verdict for every extension row, on a GPU named as nvidia-smi prints it. */
function verdictsOn(gpuName: string, platform?: ExtensionPlatform) {
  const gpu = kb.gpu(gpuName);
  assert.ok(gpu, `${gpuName} is in the GPU table`);
  const query = {
    computeCapability: asCapability(gpu.computeCapability),
    platform: platform ?? (gpu.hostCpuArch === "aarch64" ? "linux-aarch64" : "linux-x86_64"),
  } as const;
  return Object.fromEntries(kb.extensionVerdicts(query).map((v) => [v.name, v]));
}

test("GB10 (12.1, aarch64): xformers needs a source build, bitsandbytes has sm_121", () => {
  const on = verdictsOn("NVIDIA GB10");
  assert.equal(on["xformers"]!.verdict, "source-build");
  assert.match(on["xformers"]!.reason, /no binary for linux-aarch64/);
  assert.equal(on["bitsandbytes"]!.verdict, "prebuilt");
  assert.equal(on["bitsandbytes"]!.how, "sass");
  assert.ok(on["bitsandbytes"]!.builds.some((build) => build.targets.includes("sm_121")));
});

test("RTX 5070 Ti (12.0, x86_64): xformers cu130 has sm_120a, bitsandbytes sm_120", () => {
  const on = verdictsOn("NVIDIA GeForce RTX 5070 Ti");
  assert.equal(on["xformers"]!.verdict, "prebuilt");
  assert.equal(on["xformers"]!.how, "sass");
  assert.deepEqual(
    on["xformers"]!.builds.map((build) => build.cuda),
    ["13.0"],
    "only the CUDA 13.0 build has Blackwell SASS; 12.6/12.8 run through compute_80 PTX",
  );
  assert.equal(on["bitsandbytes"]!.verdict, "prebuilt");
  assert.equal(on["bitsandbytes"]!.how, "sass");
  // Windows wheels carry the same lists.
  assert.equal(verdictsOn("NVIDIA GeForce RTX 5070 Ti", "windows-x86_64")["xformers"]!.how, "sass");
});

/** Which of the packaged extensions need a source build on this GPU, and which compile at run time. */
function byVerdict(gpuName: string) {
  const on = verdictsOn(gpuName);
  const names = (kind: string) =>
    Object.values(on)
      .filter((v) => v.verdict === kind)
      .map((v) => v.name)
      .sort();
  return {
    sourceBuild: names("source-build"),
    jit: names("jit"),
    prebuilt: names("prebuilt"),
    unknown: names("unknown"),
  };
}

test("every extension on GB10 and on an RTX 5070 Ti: what needs a source build", () => {
  const gb10 = byVerdict("NVIDIA GB10");
  assert.deepEqual(gb10.sourceBuild, ["causal-conv1d", "xformers"]);
  assert.deepEqual(gb10.prebuilt, ["bitsandbytes", "flash-attn", "mamba-ssm", "transformer-engine"]);
  assert.deepEqual(gb10.jit, ["deepspeed", "flashinfer-python", "triton", "unsloth"]);
  assert.deepEqual(gb10.unknown, ["vllm"], "vllm's wheel arch list is not sourced");
  const rtx = byVerdict("NVIDIA GeForce RTX 5070 Ti");
  assert.deepEqual(rtx.sourceBuild, []);
  assert.deepEqual(rtx.prebuilt, [
    "bitsandbytes",
    "causal-conv1d",
    "flash-attn",
    "mamba-ssm",
    "transformer-engine",
    "xformers",
  ]);
  // Thor (11.0): transformer-engine's default archs stop at 12.0 without 11.0, and it embeds no PTX.
  assert.equal(verdictsOn("11.0", "linux-aarch64")["transformer-engine"]!.verdict, "source-build");
});

test("Jetson Orin (8.7): no published bitsandbytes, xformers or transformer-engine binary runs", () => {
  const on = verdictsOn("8.7", "linux-aarch64");
  assert.equal(on["bitsandbytes"]!.verdict, "source-build");
  assert.equal(on["xformers"]!.verdict, "source-build");
  assert.equal(on["transformer-engine"]!.verdict, "source-build");
});

test("causal-conv1d on aarch64: its setup.py fetches the x86_64 wheel, so a source build; mamba-ssm fetches the right one", () => {
  const gb10 = verdictsOn("NVIDIA GB10");
  assert.equal(gb10["causal-conv1d"]!.verdict, "source-build");
  assert.match(gb10["causal-conv1d"]!.reason, /linux_x86_64 wheel on every Linux machine/);
  // the aarch64 wheels themselves exist: the row's builds say so, only the installer misses them
  assert.ok(
    kb.extension("causal-conv1d")!.builds!.some((build) => build.platforms.includes("linux-aarch64")),
  );
  assert.equal(gb10["mamba-ssm"]!.verdict, "prebuilt");
  assert.equal(gb10["mamba-ssm"]!.how, "sass");
  assert.deepEqual(
    gb10["mamba-ssm"]!.builds.map((build) => build.cuda),
    ["13.0", "12.9"],
    "sm_121 in the 13.0 build, sm_120 (which 12.1 runs) in the 12.9 build; no aarch64 11.8 build",
  );
  // x86_64: both are prebuilt with SASS for the RTX 5090
  const rtx = verdictsOn("NVIDIA GeForce RTX 5090");
  assert.equal(rtx["causal-conv1d"]!.how, "sass");
  assert.equal(rtx["mamba-ssm"]!.how, "sass");
});

test("Jetson Orin (8.7): mamba-ssm's wheels carry sm_87; causal-conv1d's too, but its installer misses them", () => {
  const on = verdictsOn("Jetson Orin NX 16GB");
  assert.equal(on["mamba-ssm"]!.verdict, "prebuilt");
  assert.equal(on["mamba-ssm"]!.how, "sass");
  assert.ok(on["mamba-ssm"]!.builds.every((build) => build.targets.includes("sm_87")));
  const causal = kb.extension("causal-conv1d")!;
  assert.ok(causal.builds!.every((build) => build.targets.includes("sm_87")));
  assert.equal(on["causal-conv1d"]!.verdict, "source-build", "Orin is aarch64: the install hazard applies");
  assert.equal(on["flashinfer-python"]!.verdict, "unknown", "8.7 is not in flashinfer's README table");
});

test("flashinfer compiles at run time for the capabilities its README lists", () => {
  const query = (cc: string) =>
    kb.extensionVerdicts({ computeCapability: asCapability(cc), platform: "linux-x86_64" }, [
      "flashinfer-python",
    ])[0]!;
  assert.equal(query("12.1").verdict, "jit");
  assert.equal(query("11.0").verdict, "jit");
  assert.equal(query("10.7").verdict, "unknown", "Rubin is not in the README table");
  assert.match(query("10.7").reason, /not recorded/);
});

test("an older release: xformers 0.0.32.post2 reaches Blackwell only through PTX", () => {
  const row = structuredClone(kb.extension("xformers")!);
  row.builds = row.builds!.filter((build) => build.version === "0.0.32.post2");
  const local = new KnowledgeBase({ ...data, extensions: [row] });
  const [verdict] = local.extensionVerdicts({
    computeCapability: asCapability("12.0"),
    platform: "linux-x86_64",
  });
  assert.equal(verdict!.verdict, "prebuilt");
  assert.equal(verdict!.how, "ptx-jit");
});

test("integrity: a capability both supported and source-built, or a source build a wheel covers, is flagged", () => {
  const broken = structuredClone(data);
  const xformers = broken.extensions.find((row) => row.name === "xformers")!;
  xformers.buildFromSourceFor.push("9.0");
  const bnb = broken.extensions.find((row) => row.name === "bitsandbytes")!;
  bnb.buildFromSourceFor.push("8.9");
  bnb.builds![0]!.source = "https://example.com/not-a-source";
  broken.extensions.find((row) => row.name === "causal-conv1d")!.installHazards![0]!.source =
    "https://example.com/elsewhere";
  const problems = findContradictions(broken).join("\n");
  assert.match(
    problems,
    /causal-conv1d: install hazard on linux-aarch64 cites https:\/\/example\.com\/elsewhere/,
  );
  assert.match(problems, /extension xformers: 9\.0 is both supported and listed as needing a source build/);
  assert.match(
    problems,
    /extension xformers: 9\.0 is listed as needing a source build, but the 0\.0\.35 CUDA 13\.0 build/,
  );
  assert.match(problems, /extension bitsandbytes: 8\.9 is listed as needing a source build/);
  assert.match(
    problems,
    /bitsandbytes 0\.50\.1 CUDA 13\.2: its source https:\/\/example\.com\/not-a-source is not among/,
  );
});

const cli = fileURLToPath(new URL("../cli/main.js", import.meta.url));

test("gpuprep kb ext xformers prints the claims, the builds and the pinned sources", () => {
  const result = spawnSync(process.execPath, [cli, "kb", "ext", "xformers"], {
    encoding: "utf8",
    env: { ...process.env, XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), "gpuprep-ext-")), NO_COLOR: "1" },
  });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^xformers\n/);
  assert.match(result.stdout, /platforms: linux-x86_64, windows-x86_64/);
  assert.match(
    result.stdout,
    /0\.0\.35 CUDA 13\.0 torch >=2\.10 \[linux-x86_64, windows-x86_64\]: .*sm_120a sm_121a/,
  );
  assert.match(
    result.stdout,
    /sources:\n {2}repository file at a commit, https:\/\/github\.com\/facebookresearch\/xformers\/blob\/[0-9a-f]{40}\/\.github\/workflows\/wheels\.yml/,
  );
});
