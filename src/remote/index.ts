/**
 * An image scanned by reference, whatever kind of reference it is. The rest of src/remote is
 * imported from its own modules (wheel.ts scanWheel, lock-scan.ts scanLockClosure, image.ts,
 * registry.ts, simple-index.ts, variant.ts); this file re-exported them all, and nothing imported
 * them from here (scripts/guards/unused-exports.mjs). Nothing fetches unless given a URL (or a
 * lock/index that names one) and an HttpClient; every client is bounded (deadline, byte caps, idle
 * limit, redirects).
 *
 * Verdicts for a GPU come from kb/compat.ts coverageFor over each library's SASS and PTX targets
 * (fatbin/scan-paths.ts coverageOf gives them), as `gpuprep scan` does in remote/scan-remote.ts.
 */
import { statSync } from "node:fs";
import { HttpClient } from "./http.js";
import { openImageArchive, openOciLayout, scanImage, type ImageScan } from "./image.js";
import { openRegistryImage } from "./registry.js";
import type { CpuArch } from "./wheel-tags.js";

/**
 * An image by reference: `docker://REGISTRY/NAME:TAG` (fetched with `client`), an OCI layout
 * directory, or a `docker save` / OCI archive (.tar); the platform picked for `arch`.
 */
export async function scanImageRef(
  ref: string,
  options: { arch: CpuArch; client?: HttpClient },
): Promise<ImageScan> {
  const source = ref.startsWith("docker://")
    ? await openRegistryImage(ref, options.client ?? new HttpClient(), options.arch)
    : statSync(ref).isDirectory()
      ? await openOciLayout(ref, options.arch)
      : await openImageArchive(ref, options.arch);
  return scanImage(source);
}
