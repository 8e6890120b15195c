import { test } from "node:test";
import assert from "node:assert/strict";
import {
  parseTorchVariant,
  torchIndexFromUrl,
  torchVariantOfCuda,
  torchVariantOfLocal,
} from "./torch-variant.js";
import { cudaWheelTag, parseCudaVersion } from "./cuda-version.js";

test("every PyTorch index URL form names its variant and channel; other indexes name none", () => {
  const cases: [string, string | null, string | null][] = [
    ["https://download.pytorch.org/whl/cu128", "cu128", "stable"],
    ["https://download.pytorch.org/whl/cu128/", "cu128", "stable"],
    ["https://download.pytorch.org/whl/nightly/cu130", "cu130", "nightly"],
    ["https://download.pytorch.org/whl/test/cu126/", "cu126", "test"],
    ["https://download-r2.pytorch.org/whl/cu124", "cu124", "stable"],
    ["http://download.pytorch.org/whl/cu92", "cu92", "stable"],
    ["https://download.pytorch.org/whl/cpu", "cpu", "stable"],
    ["https://download.pytorch.org/whl/rocm6.2.4", "rocm6.2.4", "stable"],
    ["https://download.pytorch.org/whl/xpu", "xpu", "stable"],
    ["https://pypi.org/simple", null, null],
    ["https://download.pytorch.org/whl/", null, null],
    ["https://download.pytorch.org/whl/torch_stable.html", null, null],
    ["https://mirror.example/download.pytorch.org/whl/cu128", null, null],
  ];
  for (const [url, tag, channel] of cases) {
    const index = torchIndexFromUrl(url);
    assert.equal(index?.variant.tag ?? null, tag, url);
    assert.equal(index?.channel ?? null, channel, url);
  }
});

test("CUDA tags: the last digit is the minor release; 12.8.1 and 12.8 give one tag", () => {
  const cu92 = parseTorchVariant("cu92");
  assert.ok(cu92?.kind === "cuda" && cu92.cuda.major === 9 && cu92.cuda.minor === 2);
  const cu130 = parseTorchVariant("cu130");
  assert.ok(cu130?.kind === "cuda" && cu130.cuda.major === 13 && cu130.cuda.minor === 0);
  assert.equal(cudaWheelTag(parseCudaVersion("12.8.1")!), "cu128");
  assert.equal(torchVariantOfCuda(parseCudaVersion("12.8.1")).tag, "cu128");
  assert.equal(torchVariantOfCuda(null).tag, "cpu");
  assert.equal(parseTorchVariant("cu1"), null);
  assert.equal(parseTorchVariant("cuda128"), null);
});

test("local versions: +cu124 and +cpu name a variant, an NGC build hash names none", () => {
  assert.equal(torchVariantOfLocal("2.5.1+cu124")?.tag, "cu124");
  assert.equal(torchVariantOfLocal("2.7.0+cpu")?.tag, "cpu");
  assert.equal(torchVariantOfLocal("2.9.0a0+145a3a7bda.nv25.10"), null);
  assert.equal(torchVariantOfLocal("2.5.1"), null);
});
