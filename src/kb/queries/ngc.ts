/** Which NGC PyTorch images run on a GPU + driver + CPU architecture, newest first. */
import { coverageFor, driverSupport, parseComputeCapability, type DriverSupport } from "../compat.js";
import type { CudaToolkitRow, NgcImageRow } from "../types.js";
import { compareVersions, majorMinor } from "../../util/version.js";
import { effectiveDriver, type CpuArch } from "./torch.js";

export interface NgcImageQuery {
  computeCapability: string;
  driverVersion: string;
  cpuArch: CpuArch;
}

export interface NgcImageVerdict {
  image: NgcImageRow;
  runs: boolean;
  driver: DriverSupport | null;
  reason: string;
}

export type NgcGpuCoverage =
  { covered: true; rule: "listed" | "min-capability"; detail: string } | { covered: false; detail: string };

/**
 * Whether an image's build covers a GPU. Two rules:
 * - "listed": the release notes list the GPU's capability (gpuArchs);
 * - "min-capability": the notes say "compute capability X and later", the GPU is at or above X,
 *   and the image's CUDA toolkit compiles SASS that runs on the GPU (its own capability or an
 *   earlier minor of the same major, per the cubin compatibility rule in compat.ts). Without the
 *   toolkit's SASS target list nothing is claimed: "X and later" cannot cover a GPU the toolkit
 *   cannot build for.
 */
export function ngcGpuCoverage(
  image: NgcImageRow,
  toolkit: CudaToolkitRow | undefined,
  computeCapability: string,
): NgcGpuCoverage {
  const cc = parseComputeCapability(computeCapability);
  const key = cc ? `${cc.major}.${cc.minor}` : computeCapability;
  if (image.gpuArchs.includes(key))
    return { covered: true, rule: "listed", detail: `its sources list compute capability ${key}` };
  const floor = image.minComputeCapability;
  if (!floor) {
    const listed =
      image.gpuArchs.length > 0 ? `list ${image.gpuArchs.join(", ")}, not ${key}` : "give no GPU list";
    return {
      covered: false,
      detail: `its sources ${listed}, and no minimum compute capability is sourced`,
    };
  }
  if (!cc || compareVersions(key, floor) < 0)
    return {
      covered: false,
      detail: `compute capability ${key} is below the sourced minimum ${floor}`,
    };
  if (!toolkit?.sassTargets)
    return {
      covered: false,
      detail: `${key} is at or above the minimum ${floor}, but the SASS targets of CUDA ${image.cuda} are not in the toolkit table, so coverage is not claimed`,
    };
  const sass = coverageFor(
    toolkit.sassTargets.map((sm) => `sm_${sm}`),
    cc,
  );
  if (sass.how !== "sass")
    return {
      covered: false,
      detail: `${key} is at or above the minimum ${floor}, but CUDA ${toolkit.version} compiles no SASS that runs on ${key} (no sm_${cc.major}x at or below it)`,
    };
  return {
    covered: true,
    rule: "min-capability",
    detail: `${key} is at or above the sourced minimum ${floor} and CUDA ${toolkit.version} compiles ${sass.via[0]} SASS, which runs on it`,
  };
}

/** Judge one image: it runs when an image exists for the CPU, its build covers the GPU and the driver runs its CUDA. */
export function judgeNgcImage(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
): NgcImageVerdict {
  if (query.cpuArch === "aarch64" && image.arm64 !== true)
    return {
      image,
      runs: false,
      driver: null,
      reason:
        image.arm64 === false
          ? `no arm64 image is published for ${image.tag}`
          : `no source says an arm64 image is published for ${image.tag}`,
    };
  const toolkit = toolkits.find((row) => row.version === majorMinor(image.cuda));
  const coverage = ngcGpuCoverage(image, toolkit, query.computeCapability);
  if (!coverage.covered) return { image, runs: false, driver: null, reason: coverage.detail };
  const floor = image.minDriverLinux ?? toolkit?.minDriverLinux;
  if (!toolkit || !floor)
    return { image, runs: false, driver: null, reason: `CUDA ${image.cuda} is not in the toolkit table` };
  const support = driverSupport(effectiveDriver(query.driverVersion), { ...toolkit, minDriverLinux: floor });
  if (support === "unsupported")
    return {
      image,
      runs: false,
      driver: support,
      reason: `${coverage.detail}; but driver ${query.driverVersion} is older than ${floor} (CUDA ${image.cuda})`,
    };
  return {
    image,
    runs: true,
    driver: support,
    reason:
      support === "native"
        ? `${coverage.detail}; driver ${query.driverVersion} runs CUDA ${image.cuda} natively`
        : `${coverage.detail}; driver ${query.driverVersion} runs CUDA ${image.cuda} only under minor-version compatibility (any GPU, limited features: PTX newer than the driver cannot be JIT-compiled; NVIDIA's image notes ask for the CUDA's own driver ${floor})`,
  };
}

export function ngcImagesFor(
  images: NgcImageRow[],
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
): NgcImageRow[] {
  return images
    .map((image) => judgeNgcImage(image, toolkits, query))
    .filter((verdict) => verdict.runs)
    .map((verdict) => verdict.image)
    .sort((a, b) => compareVersions(b.tag, a.tag));
}
