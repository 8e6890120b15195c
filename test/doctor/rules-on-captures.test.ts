/**
 * Every rule's verdict on real captured snapshots. One row per capture: the rules that must fire
 * (with their severity) and some that must stay silent. Adding a capture = one row.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { diagnose } from "../../src/rules/diagnose.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import type { Severity } from "../../src/rules/types.js";
import { CAPTURES_DIR, DERIVED, captureNames, loadCapture } from "./captures.js";

interface Row {
  capture: string;
  /** rule id -> severity of the finding it must return. */
  fires: Record<string, Severity>;
  silent: string[];
}

const ROWS: Row[] = [
  {
    capture: "no-torch-python3",
    fires: { "torch-not-installed": "info", "nvidia-driver-unavailable": "info" },
    silent: ["cpu-only-torch", "torch-import-failed", "numpy-abi-mismatch", "externally-managed-python"],
  },
  {
    capture: "debian-torch-cpu",
    fires: {
      "cpu-only-torch": "info",
      "externally-managed-python": "info",
      "nvidia-driver-unavailable": "info",
    },
    silent: [
      "torch-not-installed",
      "numpy-abi-mismatch",
      "torch-installed-twice",
      "duplicate-distributions",
      "torch-arch-not-covered",
    ],
  },
  {
    capture: "debian-torch-under-numpy2",
    fires: { "numpy-abi-mismatch": "error", "duplicate-distributions": "warning", "cpu-only-torch": "info" },
    silent: ["torch-installed-twice", "torch-import-failed", "externally-managed-python"],
  },
  {
    capture: "broken-extensions",
    fires: { "extension-import-failed": "error", "cpu-only-torch": "info" },
    silent: ["numpy-abi-mismatch", "torch-import-failed", "duplicate-distributions"],
  },
  {
    capture: "torch-installed-twice",
    fires: { "torch-installed-twice": "error", "cpu-only-torch": "info" },
    silent: ["torch-import-failed", "numpy-abi-mismatch", "torch-not-installed"],
  },
  {
    capture: "project-pins-torch-2.5.1",
    fires: { "project-torch-pin-mismatch": "warning" },
    silent: ["uv-sync-replaces-torch", "ngc-torch-hidden", "ngc-pip-constraint-not-applied"],
  },
  {
    // CUDA_VISIBLE_DEVICES="" on a machine without GPUs hides nothing.
    capture: "cuda-visible-devices-empty",
    fires: { "cpu-only-torch": "info" },
    silent: ["cuda-visible-devices-hides-gpus", "torch-cuda-unavailable"],
  },
  {
    capture: "h100-healthy",
    fires: { "tf32-disabled": "info" },
    silent: [
      "torch-arch-not-covered",
      "torch-cuda-unavailable",
      "cpu-only-torch",
      "torch-driver-too-old",
      "torch-kernel-launch-failed",
      "sdpa-fast-kernels-off",
      "extension-import-failed",
      "torch-installed-twice",
      "cuda-visible-devices-hides-gpus",
      "nvidia-driver-unavailable",
      // 851 binaries scanned, nvidia/* CUDA libraries included: no false alarms.
      "extension-arch-missing",
      "torch-binary-arch-missing",
      "ptx-only-coverage",
      // TORCH_CUDA_ARCH_LIST=9.0a (set by the image): sm_90a runs on the H100 and torch 2.11 knows it.
      "torch-cuda-arch-list-excludes-gpu",
      "torch-cuda-arch-list-invalid",
      "debug-env-left-on",
      "nccl-transport-disabled",
    ],
  },
  {
    // Two GPUs, both visible to torch: nothing hidden, nothing missing.
    capture: "h200x2-healthy",
    fires: { "tf32-disabled": "info" },
    silent: [
      "cuda-visible-devices-hides-gpus",
      "torch-arch-not-covered",
      "extension-arch-missing",
      "torch-binary-arch-missing",
      "mig-enabled",
      "torch-cuda-unavailable",
      // NCCL_NVLS_ENABLE=0 is set here: not a transport switch the catalog names.
      "nccl-transport-disabled",
      "debug-env-left-on",
    ],
  },
  {
    // --fast: no torch import, no binary scan; the static facts alone must not accuse torch.
    capture: "h100-fast",
    fires: {},
    silent: ["cpu-only-torch", "torch-cuda-unavailable", "torch-not-installed", "extension-arch-missing"],
  },
  {
    capture: "h100-cuda-visible-devices-empty",
    fires: { "cuda-visible-devices-hides-gpus": "error", "torch-cuda-unavailable": "error" },
    silent: ["cpu-only-torch", "nvidia-driver-unavailable", "torch-arch-not-covered"],
  },
  {
    capture: "h100-cuda-visible-devices-invalid",
    fires: { "cuda-visible-devices-hides-gpus": "error", "torch-cuda-unavailable": "error" },
    silent: ["cpu-only-torch", "nvidia-driver-unavailable"],
  },
  {
    capture: "h100-alloc-conf-invalid",
    fires: { "alloc-conf-invalid": "error", "torch-cuda-unavailable": "error" },
    silent: ["cpu-only-torch", "cuda-visible-devices-hides-gpus"],
  },
  {
    capture: "h100-extension-sm80-only",
    fires: { "extension-import-failed": "error", "extension-arch-missing": "error" },
    silent: ["torch-arch-not-covered", "torch-cuda-unavailable", "numpy-abi-mismatch"],
  },
  {
    capture: "h100-extensions-abi-numpy1",
    fires: { "numpy-abi-mismatch": "error", "extension-import-failed": "error" },
    silent: ["torch-cuda-unavailable", "torch-installed-twice"],
  },
  {
    capture: "h100-torch-installed-twice",
    fires: { "torch-installed-twice": "warning" },
    silent: ["torch-cuda-unavailable", "cpu-only-torch"],
  },
  {
    capture: "h100-project-pins-torch-2.5.1",
    fires: { "project-torch-pin-mismatch": "warning" },
    silent: ["torch-cuda-unavailable", "uv-sync-replaces-torch"],
  },
  // Projects read before anything is installed (python3 without torch, no GPU here): nothing to judge on the GPU.
  {
    capture: "pixi-gb10-conda-forge-project",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only", "project-replaces-torch"],
  },
  {
    capture: "conda-pytorch-channel-project",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only", "project-replaces-torch"],
  },
  {
    capture: "pixi-pypi-cu124-project",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only"],
  },
  {
    capture: "torch-pinned-project",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only", "project-torch-pin-mismatch"],
  },
  {
    capture: "requirements-cu126-pin-project",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-replaces-torch"],
  },
  {
    // The interpreter is the uv project's .venv (over Debian's CPU torch 1.13.1); uv sync would put cu126 torch there.
    capture: "uv-venv-replaces-torch",
    fires: { "project-replaces-torch": "warning", "cpu-only-torch": "info" },
    silent: ["project-torch-pin-mismatch", "uv-sync-replaces-torch", "project-torch-arch-not-covered"],
  },
  {
    // Nothing to build on a machine without a GPU, and the real toolkit was found: no toolkit finding.
    capture: "xformers-aarch64-project",
    fires: { "torch-not-installed": "info" },
    silent: ["cuda-toolkit-missing", "cuda-toolkit-torch-mismatch", "jit-cache-unwritable"],
  },
  {
    // torchvision 0.15.1's Requires-Dist torch==2.0.0 against Debian's torch 1.13; CUDA_HOME at a real
    // CUDA 13.0, but torch is a CPU build: nothing to mismatch.
    capture: "debian-venv-torchvision-pin",
    fires: { "installed-torch-pin-conflict": "error", "cpu-only-torch": "info" },
    silent: ["cuda-toolkit-torch-mismatch", "jit-cache-unwritable", "duplicate-distributions"],
  },
  {
    capture: "debian-triton-cache-unwritable",
    fires: { "jit-cache-unwritable": "error", "cpu-only-torch": "info" },
    silent: ["installed-torch-pin-conflict", "cuda-toolkit-torch-mismatch"],
  },
  // Derived cases (captures.ts DERIVED; README.md says what each changes).
  {
    // cpp_extension raises for a major mismatch: nvcc 12.8 under torch cu130.
    capture: "h100-healthy-cuda-home-12.8",
    fires: { "cuda-toolkit-torch-mismatch": "warning", "tf32-disabled": "info" },
    silent: ["cuda-toolkit-missing", "installed-torch-pin-conflict"],
  },
  {
    capture: "h100-healthy-cuda-home-13.0",
    fires: { "tf32-disabled": "info" },
    silent: ["cuda-toolkit-torch-mismatch", "cuda-toolkit-missing"],
  },
  {
    // xformers builds from source on aarch64; this machine's nvcc was found.
    capture: "xformers-aarch64-on-gb10",
    fires: { "torch-not-installed": "info" },
    silent: ["cuda-toolkit-missing", "cuda-toolkit-torch-mismatch"],
  },
  {
    capture: "xformers-aarch64-on-gb10-no-toolkit",
    fires: { "cuda-toolkit-missing": "warning" },
    silent: ["cuda-toolkit-torch-mismatch", "jit-cache-unwritable"],
  },
  {
    // Seed 000: pixi + conda-forge torch 2.5.1 on a DGX Spark: compute_90 PTX is all that runs on 12.1.
    capture: "pixi-gb10-conda-forge-on-gb10",
    fires: { "project-torch-arch-not-covered": "warning", "torch-not-installed": "info" },
    silent: ["project-torch-cpu-only", "nvidia-driver-unavailable"],
  },
  {
    capture: "pixi-gb10-conda-forge-on-h100",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only"],
  },
  {
    // Issue 11: a pyproject routing torch to the cu124 index, on a GPU cu124 cannot run.
    capture: "torch-pinned-on-rtx5090",
    fires: { "project-torch-arch-not-covered": "error", "torch-not-installed": "info" },
    silent: ["project-torch-cpu-only", "project-replaces-torch"],
  },
  {
    capture: "torch-pinned-on-h100",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only"],
  },
  {
    // torch==2.5.1 from PyPI on aarch64: the CPU wheel.
    capture: "project-pins-torch-2.5.1-on-gb10",
    fires: {
      "project-torch-cpu-only": "error",
      "cpu-only-torch": "error",
      "project-torch-pin-mismatch": "warning",
    },
    silent: ["project-torch-arch-not-covered", "project-replaces-torch"],
  },
  {
    // default environment: the cpu index; -e gpu: cu124.
    capture: "pixi-pypi-cu124-on-rtx5090",
    fires: { "project-torch-cpu-only": "error", "project-torch-arch-not-covered": "error" },
    silent: ["project-replaces-torch"],
  },
  {
    capture: "conda-pytorch-channel-on-rtx5090",
    fires: { "project-torch-arch-not-covered": "error" },
    silent: ["project-torch-cpu-only"],
  },
  {
    capture: "conda-pytorch-channel-on-h100",
    fires: { "torch-not-installed": "info" },
    silent: ["project-torch-arch-not-covered", "project-torch-cpu-only"],
  },
  {
    // pytorch-cuda exists for linux-64 and win-64 only: "not known", never a guess.
    capture: "conda-pytorch-channel-on-gb10",
    fires: { "project-torch-arch-not-covered": "info" },
    silent: ["project-torch-cpu-only"],
  },
  {
    // A +cu126 pin against an installed +cu130: the pin rule speaks, not a second finding.
    capture: "h100-fast-requirements-cu126-pin",
    fires: { "project-torch-pin-mismatch": "warning" },
    silent: ["project-replaces-torch", "project-torch-arch-not-covered", "torch-not-installed"],
  },
  {
    // uv sync targets the project's .venv, not /opt/torch/.venv: nothing of this environment is replaced.
    capture: "h100-fast-torch-pinned",
    fires: { "project-torch-pin-mismatch": "warning" },
    silent: ["project-replaces-torch", "project-torch-arch-not-covered"],
  },
  // Environment switches (issue 15): one variable added to a real capture.
  {
    capture: "h100-cuda-launch-blocking",
    fires: { "debug-env-left-on": "warning" },
    silent: ["nccl-transport-disabled", "torch-cuda-arch-list-excludes-gpu"],
  },
  {
    // EAGER alone is info: some projects choose it on purpose.
    capture: "h100-cuda-module-loading-eager",
    fires: { "debug-env-left-on": "info" },
    silent: ["nccl-transport-disabled"],
  },
  {
    // Set to 0: older torch turns caching off for any value, so it is reported.
    capture: "debian-torch-no-cuda-memory-caching-0",
    fires: { "debug-env-left-on": "warning", "cpu-only-torch": "info" },
    silent: ["torch-cuda-arch-list-invalid"],
  },
  {
    // Seed 004's kind of list without 9.0: sm_70..sm_86 SASS, no PTX: nothing runs on 9.0.
    capture: "h100-arch-list-ampere-numbers",
    fires: { "torch-cuda-arch-list-excludes-gpu": "error" },
    silent: ["torch-cuda-arch-list-invalid", "debug-env-left-on"],
  },
  {
    // "Ampere" expands to 8.0;8.6+PTX: compute_86 PTX JITs on 9.0, so it runs (slowly) and is not this rule's.
    capture: "h100-arch-list-ampere-name",
    fires: {},
    silent: ["torch-cuda-arch-list-excludes-gpu", "torch-cuda-arch-list-invalid"],
  },
  {
    // cpp_extension splits on ';' and spaces only: "8.0,9.0" is one unknown entry.
    capture: "h100-arch-list-commas",
    fires: { "torch-cuda-arch-list-invalid": "error" },
    silent: ["torch-cuda-arch-list-excludes-gpu"],
  },
  {
    // torch 1.13's table stops at 8.6 (Debian's cpp_extension.py): 9.0 raises there. No GPU here.
    capture: "debian-torch-arch-list-9.0",
    fires: { "torch-cuda-arch-list-invalid": "error", "cpu-only-torch": "info" },
    silent: ["torch-cuda-arch-list-excludes-gpu", "debug-env-left-on"],
  },
  {
    capture: "h200x2-nccl-p2p-disabled",
    fires: { "nccl-transport-disabled": "warning" },
    silent: ["debug-env-left-on"],
  },
  {
    // One GPU: P2P carries nothing between GPUs of this node, so the switch costs nothing.
    capture: "h100-nccl-p2p-disabled",
    fires: {},
    silent: ["nccl-transport-disabled"],
  },
];

const kb = loadKnowledgeBase();

for (const row of ROWS) {
  test(`rules on capture ${row.capture}`, () => {
    const facts = DERIVED[row.capture]?.() ?? loadCapture(row.capture);
    const findings = diagnose(facts, kb);
    const fired = new Set(findings.map((f) => `${f.ruleId}:${f.severity}`));
    for (const [id, severity] of Object.entries(row.fires)) {
      assert.ok(
        fired.has(`${id}:${severity}`),
        `${id} should fire as ${severity}; fired: ${[...fired].join(", ")}`,
      );
    }
    for (const id of row.silent) {
      const finding = findings.find((f) => f.ruleId === id);
      assert.equal(finding, undefined, `${id} must not fire: ${finding?.message}`);
    }
    for (const finding of findings) {
      assert.ok(finding.evidence.length > 0, `${finding.ruleId} gives evidence`);
      assert.ok(finding.fix.summary.length > 0, `${finding.ruleId} gives a fix`);
    }
  });
}

test("every capture and derived case has a row and a README line saying how it was made", () => {
  const readme = readFileSync(`${CAPTURES_DIR}README.md`, "utf8");
  for (const name of Object.keys(DERIVED))
    assert.ok(readme.includes(`${name}:`), `README.md does not say what the derived case ${name} changes`);
  for (const name of [...captureNames(), ...Object.keys(DERIVED)]) {
    assert.ok(
      ROWS.some((r) => r.capture === name),
      `no row for capture ${name}`,
    );
    if (!(name in DERIVED))
      assert.ok(readme.includes(`${name}.json`), `README.md does not say how ${name}.json was made`);
  }
});
