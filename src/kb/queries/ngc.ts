/** Which NGC PyTorch images run on a GPU + driver + CPU architecture, newest first. */
import { driverSupport, parseComputeCapability, type DriverSupport } from "../compat.js";
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

/** Judge one image; an image runs when it lists the GPU's capability, exists for the CPU and the driver runs its CUDA. */
export function judgeNgcImage(
  image: NgcImageRow,
  toolkits: CudaToolkitRow[],
  query: NgcImageQuery,
): NgcImageVerdict {
  const cc = parseComputeCapability(query.computeCapability);
  const key = cc ? `${cc.major}.${cc.minor}` : query.computeCapability;
  if (query.cpuArch === "aarch64" && image.arm64 !== true)
    return { image, runs: false, driver: null, reason: `no arm64 image is published for ${image.tag}` };
  if (!image.gpuArchs.includes(key))
    return {
      image,
      runs: false,
      driver: null,
      reason: `the release notes list ${image.gpuArchs.join(", ")}, not ${key}`,
    };
  const toolkit = toolkits.find((row) => row.version === majorMinor(image.cuda));
  const floor = image.minDriverLinux ?? toolkit?.minDriverLinux;
  if (!toolkit || !floor)
    return { image, runs: false, driver: null, reason: `CUDA ${image.cuda} is not in the toolkit table` };
  const support = driverSupport(effectiveDriver(query.driverVersion), { ...toolkit, minDriverLinux: floor });
  if (support === "unsupported")
    return {
      image,
      runs: false,
      driver: support,
      reason: `driver ${query.driverVersion} is older than ${floor} (CUDA ${image.cuda})`,
    };
  return {
    image,
    runs: true,
    driver: support,
    reason:
      support === "native"
        ? `driver ${query.driverVersion} runs CUDA ${image.cuda} natively`
        : `driver ${query.driverVersion} runs CUDA ${image.cuda} under minor-version compatibility (datacenter GPUs)`,
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
