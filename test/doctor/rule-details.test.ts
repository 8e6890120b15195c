/** What the key rules say on real captures: the cause, the evidence and the fix they give. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Rule } from "../../src/findings/types.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { extensionImportFailed } from "../../src/rules/extension-import-failed.js";
import { numpyAbiMismatch } from "../../src/rules/numpy-abi-mismatch.js";
import { torchInstalledTwice } from "../../src/rules/torch-installed-twice.js";
import { projectTorchPinMismatch } from "../../src/rules/project-torch-pin-mismatch.js";
import { cpuOnlyTorch } from "../../src/rules/cpu-only-torch.js";
import { duplicateDistributions } from "../../src/rules/duplicate-distributions.js";
import { loadCapture } from "./captures.js";

const kb = loadKnowledgeBase();
const run = (rule: Rule, capture: string) => rule.check(loadCapture(capture), kb);
const evidenceText = (finding: { evidence: { label: string; value: string }[] }) =>
  finding.evidence.map((e) => `${e.label}: ${e.value}`).join("\n");

test("extension-import-failed names each cause: undefined symbol, crash, hang", () => {
  const findings = run(extensionImportFailed, "broken-extensions");
  const byModule = (module: string) => findings.find((f) => f.message.includes(`import ${module}`));
  const xformers = byModule("xformers");
  assert.ok(xformers);
  assert.equal(xformers.severity, "error");
  assert.equal(xformers.cause, "undefined-symbol");
  assert.match(evidenceText(xformers), /undefined symbol: _ZN3c104cuda9SetDeviceEi/);
  // A source build against this torch that leaves torch alone; no GPU here, so no arch setting.
  const rebuild = xformers.fix.commands.find((c) => c.includes("pip install")) ?? "";
  assert.match(rebuild, /^MAX_JOBS=4 \S+ -m pip install .*--no-deps .*--no-binary xformers xformers==/);
  assert.doesNotMatch(rebuild, /TORCH_CUDA_ARCH_LIST/);
  const flash = byModule("flash_attn");
  assert.ok(flash);
  assert.equal(flash.cause, "import-crash");
  const apex = byModule("apex");
  assert.ok(apex);
  assert.equal(apex.severity, "warning");
  assert.equal(apex.cause, "import-hang");
  assert.equal(findings.length, 3, "extensions that import fine or are absent are silent");
});

test("numpy-abi-mismatch quotes torch's own warning and offers numpy<2", () => {
  const [finding] = run(numpyAbiMismatch, "debian-torch-under-numpy2");
  assert.ok(finding);
  assert.match(evidenceText(finding), /_ARRAY_API not found/);
  assert.match(evidenceText(finding), /numpy: 2\.2\.6/);
  assert.ok(finding.fix.commands.some((c) => c.includes('"numpy<2"')));
  assert.deepEqual(run(numpyAbiMismatch, "debian-torch-cpu"), [], "numpy 1.24 with torch 1.13 is fine");
});

test("torch-installed-twice says which copy Python imports and which it ignores", () => {
  const [finding] = run(torchInstalledTwice, "torch-installed-twice");
  assert.ok(finding);
  assert.match(
    finding.message,
    /imports 2\.13\.0\+cpu from \S+\/site-packages and ignores 1\.13\.\S* in \/usr\/lib\/python3\/dist-packages/,
  );
  assert.equal(finding.fix.commands.filter((c) => c.includes("pip uninstall -y torch")).length, 2);
});

test("duplicate-distributions reports numpy 2.2.6 over 1.24.2 but not same-version pip/setuptools", () => {
  const [finding] = run(duplicateDistributions, "debian-torch-under-numpy2");
  assert.ok(finding);
  assert.match(evidenceText(finding), /numpy: imports 2\.2\.6 .* also 1\.24\.2/);
  assert.doesNotMatch(evidenceText(finding), /^pip:|^setuptools:/m);
});

test("project-torch-pin-mismatch cites every manifest line that pins torch", () => {
  const [finding] = run(projectTorchPinMismatch, "project-pins-torch-2.5.1");
  assert.ok(finding);
  const text = evidenceText(finding);
  assert.match(text, /pyproject\.toml:project\.dependencies: torch==2\.5\.1/);
  assert.match(text, /requirements\.txt:\d+: torch==2\.5\.1/);
  assert.match(finding.message, /torch 1\.13\.\S* is installed/);
});

test("cpu-only-torch is info without a GPU, and silent without torch", () => {
  const [finding] = run(cpuOnlyTorch, "debian-torch-cpu");
  assert.equal(finding?.severity, "info");
  assert.deepEqual(run(cpuOnlyTorch, "no-torch-python3"), []);
});

test("H100 captures: torch's CUDA version read statically, binaries scanned beside the probe", () => {
  const healthy = loadCapture("h100-healthy");
  assert.equal(healthy.python.torch?.cudaVersion, "13.0"); // annotated `cuda: Optional[str] = '13.0'`
  assert.equal(healthy.binaries.scanned, true);
  assert.ok(healthy.binaries.filesExamined > 800);
  const torchCuda = healthy.binaries.files.find((f) => f.path.endsWith("torch/lib/libtorch_cuda.so"));
  // As measured with cuobjdump there (test/fixtures/h100-raw/cuobj-elf.txt), plus the family
  // suffix cuobjdump does not print.
  assert.deepEqual(torchCuda?.ptx, []);
  assert.ok(torchCuda?.sass.includes("sm_90") && torchCuda.sass.includes("sm_90a"));
  assert.equal(loadCapture("h100-fast").binaries.scanned, false);
});
