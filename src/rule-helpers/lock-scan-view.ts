/**
 * What the scan of the project's locked wheels (facts.lockScan, doctor --fetch) says for a GPU:
 * each scanned package's libraries judged with kb/compat.ts coverageFor, as `gpuprep scan` judges
 * them, and which lock an install prediction installs from, so the scan's verdict for torch takes
 * precedence over the knowledge base's.
 */
import type { Facts, LockScanFacts, LockedPackageScan } from "../facts/schema.js";
import { coverageFor, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";
import type { InstallPrediction } from "../project/install-prediction.js";
import { shortPath } from "../project/routes.js";
import { normalizeName } from "../util/package-name.js";

export type ScannedLock = LockScanFacts["locks"][number];

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

/** The lock an install command installs from: uv sync from uv.lock, pip install -r FILE from FILE. */
export function lockOfPrediction(facts: Facts, prediction: InstallPrediction): ScannedLock | null {
  const locks = facts.lockScan?.locks ?? [];
  if (prediction.command === "uv sync") return locks.find((l) => l.kind === "uv.lock") ?? null;
  const dir = facts.project?.dir;
  if (prediction.tool !== "pip" || !dir) return null;
  return (
    locks.find((l) => l.kind === "requirements" && shortPath(dir, l.path) === prediction.manifest) ?? null
  );
}

/**
 * The torch wheel the prediction's lock pins, when it was read and holds CUDA code: its verdict
 * is then the wheel's own, and the knowledge base's prediction gives way to it.
 */
export function scannedTorchOf(facts: Facts, prediction: InstallPrediction): LockedPackageScan | null {
  const lock = lockOfPrediction(facts, prediction);
  const torch = lock?.packages.find((p) => normalizeName(p.name) === "torch" && p.status === "scanned");
  if (!torch) return null;
  const withCode = torch.libraries.some((l) => l.sass.length + l.ptx.length > 0);
  return withCode ? torch : null;
}
