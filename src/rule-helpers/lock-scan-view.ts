/**
 * What the scan of the project's locked wheels (facts.lockScan, doctor --fetch) says for a GPU:
 * each scanned package's libraries judged with kb/compat.ts coverageFor, as `gpuprep scan` judges
 * them, and which lock an install prediction installs from, so the scan's verdict for torch takes
 * precedence over the knowledge base's.
 */
import type { Facts, LockScanFacts, LockedPackageScan } from "../facts/schema.js";
import type { InstallPrediction } from "../project/install-prediction.js";
import { shortPath } from "../project/routes.js";
import { normalizeName } from "../util/package-name.js";

export type ScannedLock = LockScanFacts["locks"][number];

export { libraryVerdicts, packageVerdict, type LibraryVerdict } from "../project/locked-wheels.js";

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
