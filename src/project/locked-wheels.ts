/**
 * The verdict of a locked wheel's CUDA libraries for a GPU (facts.lockScan): each library's SASS and
 * PTX targets judged with kb/compat.ts coverageFor, as `gpuprep scan` judges them. Shared by doctor's
 * locked-wheel-arch-missing and init's check of the wheels it plans to install.
 */
import type { LockedPackageScan } from "../facts/schema.js";
import { coverageFor, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";

export interface LibraryVerdict {
  member: string;
  targets: string[];
  verdict: CoverageVerdict;
}

/**
 * NVIDIA's CUDA library wheels (nvidia/cublas, nvidia/cufft ...) are not judged, as in the
 * installed scan (binary-coverage.ts isCudaToolkitLibrary): their coverage follows their CUDA
 * version, and some keep most kernels outside the fatbin sections.
 */
function isCudaToolkitMember(member: string): boolean {
  return member.startsWith("nvidia/");
}

/** The package's libraries with CUDA code, each judged for the GPU. */
export function libraryVerdicts(pkg: LockedPackageScan, cc: ComputeCapability): LibraryVerdict[] {
  return pkg.libraries
    .filter((l) => !isCudaToolkitMember(l.member))
    .map((l) => ({ member: l.member, targets: [...l.sass, ...l.ptx] }))
    .filter((l) => l.targets.length > 0)
    .map((l) => ({ ...l, verdict: coverageFor(l.targets, cc) }));
}

/** The worst verdict over the libraries (none < ptx-jit < sass); null: no CUDA code to judge. */
export function packageVerdict(verdicts: LibraryVerdict[]): CoverageVerdict["how"] | null {
  if (verdicts.length === 0) return null;
  const hows = verdicts.map((v) => v.verdict.how);
  return hows.includes("none") ? "none" : hows.includes("ptx-jit") ? "ptx-jit" : "sass";
}
