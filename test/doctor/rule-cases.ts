/**
 * The rule cases: which rules must fire, and which must stay silent, on each real capture and
 * each derived case. Data only: test/doctor/rules-on-captures.test.ts runs every row through
 * diagnose(), and src/rules/registry.test.ts reads the rows to check that every registered rule
 * has at least one case where it fires and one where it stays silent (as ESLint's RuleTester
 * requires both valid and invalid cases).
 *
 * One row per case:
 *   capture  a file name under test/fixtures/facts (without .json), or a key of DERIVED in
 *            captures.ts: a real capture with one part changed by derive(), listed in
 *            test/fixtures/facts/README.md with what it changes;
 *   fires    rule id -> the severity of a finding it must return (the contract is the id and the
 *            severity, never the message prose);
 *   silent   rule ids that must return nothing on it.
 * A new rule adds its cases here: one row (or a rule id in an existing row's fires and silent).
 */
import type { Severity } from "../../src/findings/types.js";

export interface Row {
  capture: string;
  /** rule id -> severity of the finding it must return. */
  fires: Record<string, Severity>;
  silent: string[];
}

export const ROWS: Row[] = [
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
      "user-site-leak",
      "tf32-disabled",
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
    silent: [
      "extension-leaves-process",
      "pyarrow-cudf-mismatch",
      "numpy-abi-mismatch",
      "torch-import-failed",
      "duplicate-distributions",
    ],
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
      "shm-too-small",
      "memlock-limited",
      "alloc-conf-invalid",
      "ld-library-path-foreign-cuda",
      "pyarrow-cudf-mismatch",
      "mig-enabled",
      "ngc-torch-hidden",
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
    fires: { "cuda-visible-devices-hides-gpus": "error" },
    // torch-cuda-unavailable is the symptom of this cause: merged into the finding above.
    silent: [
      "torch-cuda-unavailable",
      "cpu-only-torch",
      "nvidia-driver-unavailable",
      "torch-arch-not-covered",
    ],
  },
  {
    capture: "h100-cuda-visible-devices-invalid",
    fires: { "cuda-visible-devices-hides-gpus": "error" },
    // torch-cuda-unavailable is the symptom of this cause: merged into the finding above.
    silent: ["torch-cuda-unavailable", "cpu-only-torch", "nvidia-driver-unavailable"],
  },
  {
    capture: "h100-alloc-conf-invalid",
    fires: { "alloc-conf-invalid": "error" },
    // torch-cuda-unavailable is the symptom of this cause: merged into the finding above.
    silent: ["torch-cuda-unavailable", "cpu-only-torch", "cuda-visible-devices-hides-gpus"],
  },
  {
    // One cause, one finding: the import error ("no kernel image") is merged into extension-arch-missing.
    capture: "h100-extension-sm80-only",
    fires: { "extension-arch-missing": "error" },
    silent: [
      "extension-import-failed",
      "torch-arch-not-covered",
      "torch-cuda-unavailable",
      "numpy-abi-mismatch",
    ],
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
  // Derived cases (captures.ts DERIVED; README.md says what each changes).
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
  // Derived cases for rules no capture shows firing (captures.ts DERIVED; README.md says what each changes).
  {
    // torch 2.11+cu130 on a V100: CUDA 13 has no sm_70. The arch list, the binaries and the failed kernel
    // say the same: one finding (merge-findings.ts), torch-arch-not-covered's, the others its evidence.
    capture: "h100-healthy-on-v100",
    fires: { "torch-arch-not-covered": "error" },
    silent: [
      "torch-binary-arch-missing",
      "torch-kernel-launch-failed",
      "torch-driver-too-old",
      "cpu-only-torch",
      "torch-import-failed",
    ],
  },
  {
    // Without a live import only the binary scan can say it.
    capture: "h100-healthy-on-v100-import-timeout",
    fires: { "torch-binary-arch-missing": "error", "torch-import-failed": "error" },
    silent: ["torch-arch-not-covered", "torch-kernel-launch-failed"],
  },
  {
    capture: "h100-healthy-kernel-out-of-memory",
    fires: { "torch-kernel-launch-failed": "error" },
    silent: ["torch-arch-not-covered", "torch-binary-arch-missing"],
  },
  {
    capture: "h100-healthy-torch-import-error",
    fires: { "torch-import-failed": "error" },
    silent: ["torch-not-installed", "torch-kernel-launch-failed", "sdpa-fast-kernels-off"],
  },
  {
    capture: "h100-healthy-driver-535",
    fires: { "torch-driver-too-old": "error" },
    silent: ["nvidia-driver-unavailable", "torch-arch-not-covered"],
  },
  {
    // A venv of its own in an NGC image: the image's torch is hidden, and 2.11 violates its constraint.
    capture: "h100-healthy-in-ngc-25.09",
    fires: { "ngc-torch-hidden": "error", "ngc-pip-constraint-not-applied": "error" },
    silent: ["uv-sync-replaces-torch", "torch-arch-not-covered"],
  },
  {
    capture: "torch-pinned-project-in-ngc-25.09",
    fires: { "uv-sync-replaces-torch": "warning", "ngc-torch-hidden": "error" },
    silent: ["ngc-pip-constraint-not-applied", "project-replaces-torch"],
  },
  {
    capture: "h100-healthy-shm-64mib",
    fires: { "shm-too-small": "warning" },
    silent: ["memlock-limited"],
  },
  {
    capture: "h100-healthy-memlock-64kib",
    fires: { "memlock-limited": "warning" },
    silent: ["shm-too-small"],
  },
  {
    capture: "h100-healthy-mig-enabled",
    fires: { "mig-enabled": "warning" },
    silent: ["cuda-visible-devices-hides-gpus"],
  },
  {
    capture: "h100-healthy-ld-library-path-cuda-12.4",
    fires: { "ld-library-path-foreign-cuda": "warning" },
    silent: ["torch-import-failed"],
  },
  {
    capture: "h100-healthy-sdpa-fast-off",
    fires: { "sdpa-fast-kernels-off": "warning" },
    silent: ["torch-kernel-launch-failed"],
  },
  {
    capture: "h100-healthy-cudf-pyarrow-error",
    fires: { "pyarrow-cudf-mismatch": "error" },
    silent: ["numpy-abi-mismatch"],
  },
  {
    capture: "debian-torch-cpu-numpy-in-user-site",
    fires: { "user-site-leak": "warning" },
    silent: ["duplicate-distributions"],
  },
  {
    capture: "broken-extensions-xformers-leaves-process",
    fires: { "extension-leaves-process": "warning", "extension-import-failed": "error" },
    silent: ["extension-arch-missing"],
  },
  {
    // Built with -gencode arch=compute_80,code=[sm_80,compute_80]: runs on the H100 through PTX JIT.
    capture: "h100-extension-sm80-with-ptx",
    fires: { "ptx-only-coverage": "warning" },
    silent: ["extension-arch-missing", "extension-import-failed"],
  },
  {
    // Another cause for the same extension: the import error and the arch finding stay two.
    capture: "h100-extension-sm80-undefined-symbol",
    fires: { "extension-import-failed": "error", "extension-arch-missing": "error" },
    silent: ["torch-arch-not-covered"],
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
  {
    // torch sees no GPU with no cause gpuprep can name (nvidia_uvm, a broken driver state): the
    // generic finding stands alone.
    capture: "h100-cuda-unknown-error",
    fires: { "torch-cuda-unavailable": "error" },
    silent: ["cuda-visible-devices-hides-gpus", "alloc-conf-invalid", "torch-driver-too-old"],
  },
  // Triton's ptxas (issue 25 item 4): the real H100 capture with triton 3.6.0 (ptxas 12.8.93,
  // ptxas-blackwell 12.9.86, and the toolkit's CUDA 13.0 ptxas, each asked for its --gpu-name list).
  {
    capture: "h100-triton-3.6-fast",
    fires: {},
    silent: ["triton-ptxas-rejects-gpu"],
  },
  {
    // Arch 110 goes to ptxas-blackwell (CUDA 12.9), which has no sm_110a.
    capture: "h100-triton-3.6-on-thor",
    fires: { "triton-ptxas-rejects-gpu": "error" },
    silent: [],
  },
  {
    capture: "h100-triton-3.6-on-gb10",
    fires: {},
    silent: ["triton-ptxas-rejects-gpu"],
  },
  {
    capture: "h100-triton-3.6-on-thor-blackwell-path",
    fires: {},
    silent: ["triton-ptxas-rejects-gpu"],
  },
  {
    // TRITON_PTXAS_PATH replaces the ptxas of arch < 100 only: Thor still fails.
    capture: "h100-triton-3.6-on-thor-ptxas-path",
    fires: { "triton-ptxas-rejects-gpu": "error" },
    silent: [],
  },
  {
    // triton-lang/triton#8539: 3.5's one ptxas (12.8) has no sm_121a.
    capture: "h100-triton-3.5-layout-on-gb10",
    fires: { "triton-ptxas-rejects-gpu": "error" },
    silent: [],
  },
  {
    // The locked wheel on disk holds sm_100a only (issue 25 item 2).
    capture: "debian-locked-wheels-on-h100",
    fires: { "locked-wheel-arch-missing": "error" },
    silent: [],
  },
  {
    capture: "debian-locked-wheels-on-b200",
    fires: {},
    silent: ["locked-wheel-arch-missing"],
  },
  {
    // No GPU: nothing to judge the wheel for.
    capture: "debian-locked-wheels",
    fires: {},
    silent: ["locked-wheel-arch-missing"],
  },
  {
    // Not reached: said (info), not guessed.
    capture: "debian-locked-wheels-unreachable",
    fires: { "locked-wheel-arch-missing": "info" },
    silent: [],
  },
];
