/**
 * What src/remote offers the rest of gpuprep: scanning wheels, locks and images that are not
 * installed. Nothing here fetches unless given a URL (or a lock/index that names one) and an
 * HttpClient; every client is bounded (deadline, byte caps, idle limit, redirects).
 *
 *   const client = new HttpClient();                       // or { ...DEFAULT_HTTP_LIMITS, deadlineMs }
 *   const wheel = await scanWheel(urlOrPath, { client });  // WheelScan: libraries (FileScan + passes), bytesFetched, variant
 *   const lock = await scanLockClosure("uv.lock", { platform: { arch: "aarch64", python: "3.12", glibc: [2, 39] }, client });
 *   const image = await scanImageRef("docker://host/name:tag", { arch: "aarch64", client });
 *
 * Verdicts for a GPU come from kb/compat.ts coverageFor over each library's SASS and PTX targets
 * (fatbin/scan-paths.ts coverageOf gives them), as `gpuprep scan` does in remote/scan-remote.ts.
 */
import { statSync } from "node:fs";
import { HttpClient } from "./http.js";
import { openImageArchive, openOciLayout, scanImage, type ImageScan } from "./image.js";
import { openRegistryImage } from "./registry.js";
import type { CpuArch } from "./wheel-tags.js";

export { HttpClient, DEFAULT_HTTP_LIMITS, FetchError, type HttpLimits } from "./http.js";
export { scanWheel, type WheelScan, type WheelScanOptions } from "./wheel.js";
export { scanLockClosure, type LockScan, type LockScanOptions, type PackageScan } from "./lock-scan.js";
export { readLockFile, type LockFile, type LockedPackage, type LockedWheel } from "./locks.js";
export { projectFiles, findLinksFiles, pickWheel, type IndexFile, type PickOutcome } from "./simple-index.js";
export {
  scanImage,
  openImageArchive,
  openOciLayout,
  type ImageScan,
  type ImageSource,
  type ImageLibrary,
} from "./image.js";
export { openRegistryImage, parseImageReference } from "./registry.js";
export {
  chooseVariant,
  compareVariantWithBinaries,
  nvidiaCompatible,
  parseVariantJson,
  type VariantChoice,
  type VariantFinding,
  type VariantMetadata,
} from "./variant.js";
export {
  parseWheelName,
  supportedTags,
  isPureWheel,
  type CpuArch,
  type TargetPlatform,
  type WheelName,
} from "./wheel-tags.js";

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
