/** Every diagnostic rule, in the order their findings are listed within a severity. */
import type { Rule } from "../findings/types.js";
import { nvidiaDriverUnavailable } from "./nvidia-driver-unavailable.js";
import { torchNotInstalled } from "./torch-not-installed.js";
import { torchImportFailed } from "./torch-import-failed.js";
import { cpuOnlyTorch } from "./cpu-only-torch.js";
import { torchDriverTooOld } from "./torch-driver-too-old.js";
import { torchArchNotCovered } from "./torch-arch-not-covered.js";
import { torchCudaUnavailable } from "./torch-cuda-unavailable.js";
import { torchKernelLaunchFailed } from "./torch-kernel-launch-failed.js";
import { torchInstalledTwice } from "./torch-installed-twice.js";
import { duplicateDistributions } from "./duplicate-distributions.js";
import { userSiteLeak } from "./user-site-leak.js";
import { ngcTorchHidden } from "./ngc-torch-hidden.js";
import { projectTorchPinMismatch } from "./project-torch-pin-mismatch.js";
import { projectTorchArchNotCovered } from "./project-torch-arch-not-covered.js";
import { projectTorchCpuOnly } from "./project-torch-cpu-only.js";
import { projectReplacesTorch } from "./project-replaces-torch.js";
import { uvSyncReplacesTorch } from "./uv-sync-replaces-torch.js";
import { ngcPipConstraintNotApplied } from "./ngc-pip-constraint-not-applied.js";
import { numpyAbiMismatch } from "./numpy-abi-mismatch.js";
import { pyarrowCudfMismatch } from "./pyarrow-cudf-mismatch.js";
import { extensionImportFailed } from "./extension-import-failed.js";
import { extensionLeavesProcess } from "./extension-leaves-process.js";
import { shmTooSmall } from "./shm-too-small.js";
import { memlockLimited } from "./memlock-limited.js";
import { cudaVisibleDevicesHidesGpus } from "./cuda-visible-devices-hides-gpus.js";
import { sdpaFastKernelsOff } from "./sdpa-fast-kernels-off.js";
import { migEnabled } from "./mig-enabled.js";
import { tf32Disabled } from "./tf32-disabled.js";
import { allocConfInvalid } from "./alloc-conf-invalid.js";
import { externallyManagedPython } from "./externally-managed-python.js";
import { ldLibraryPathForeignCuda } from "./ld-library-path-foreign-cuda.js";
import { torchBinaryArchMissing } from "./torch-binary-arch-missing.js";
import { extensionArchMissing } from "./extension-arch-missing.js";
import { ptxOnlyCoverage } from "./ptx-only-coverage.js";
import { debugEnvLeftOn } from "./debug-env-left-on.js";
import { torchCudaArchListExcludesGpu } from "./torch-cuda-arch-list-excludes-gpu.js";
import { torchCudaArchListInvalid } from "./torch-cuda-arch-list-invalid.js";
import { ncclTransportDisabled } from "./nccl-transport-disabled.js";
import { installedTorchPinConflict } from "./installed-torch-pin-conflict.js";
import { cudaToolkitTorchMismatch } from "./cuda-toolkit-torch-mismatch.js";
import { cudaToolkitMissing } from "./cuda-toolkit-missing.js";
import { jitCacheUnwritable } from "./jit-cache-unwritable.js";
import { tritonPtxasRejectsGpu } from "./triton-ptxas-rejects-gpu.js";
import { lockedWheelArchMissing } from "./locked-wheel-arch-missing.js";

export const RULES: readonly Rule[] = [
  nvidiaDriverUnavailable,
  torchNotInstalled,
  torchImportFailed,
  cpuOnlyTorch,
  torchDriverTooOld,
  torchArchNotCovered,
  torchBinaryArchMissing,
  torchCudaUnavailable,
  torchKernelLaunchFailed,
  torchInstalledTwice,
  duplicateDistributions,
  userSiteLeak,
  ngcTorchHidden,
  projectTorchPinMismatch,
  projectTorchArchNotCovered,
  lockedWheelArchMissing,
  projectTorchCpuOnly,
  projectReplacesTorch,
  uvSyncReplacesTorch,
  ngcPipConstraintNotApplied,
  numpyAbiMismatch,
  pyarrowCudfMismatch,
  installedTorchPinConflict,
  extensionImportFailed,
  extensionLeavesProcess,
  extensionArchMissing,
  ptxOnlyCoverage,
  torchCudaArchListExcludesGpu,
  torchCudaArchListInvalid,
  shmTooSmall,
  memlockLimited,
  cudaVisibleDevicesHidesGpus,
  sdpaFastKernelsOff,
  migEnabled,
  tf32Disabled,
  allocConfInvalid,
  externallyManagedPython,
  ldLibraryPathForeignCuda,
  debugEnvLeftOn,
  ncclTransportDisabled,
  cudaToolkitTorchMismatch,
  cudaToolkitMissing,
  jitCacheUnwritable,
  tritonPtxasRejectsGpu,
];

export function ruleById(id: string): Rule | undefined {
  return RULES.find((rule) => rule.id === id);
}

/**
 * The rules that judge only the project's manifests against a machine's GPU, driver and CPU: what
 * `doctor --target NAME` runs, where no Python environment was gathered.
 */
export const PROJECT_RULE_IDS = [
  "project-torch-arch-not-covered",
  "project-torch-cpu-only",
  "project-torch-pin-mismatch",
];
