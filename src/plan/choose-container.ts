/** The NGC PyTorch image for a target: the newest that covers its GPU, CPU and driver. */
import type { KnowledgeBase, NgcImageVerdict } from "../kb/index.js";
import type { ContainerChoice, Decision, ProtectedPackage, TargetMachine } from "./types.js";
import { normalizeName } from "../util/package-name.js";
import { compareVersions } from "../util/version.js";

/** Stands for "any current driver" when the target's is unknown: the plan then states the one it needs. */
export const NEWEST_DRIVER = "9999";

export interface ContainerOutcome {
  choice: ContainerChoice | null;
  requiredDriver: string | null;
  decisions: Decision[];
  /** Why each image was turned down (newest first), for "container cannot work" messages. */
  rejections: string[];
}

export function chooseContainer(kb: KnowledgeBase, target: TargetMachine): ContainerOutcome {
  const verdicts: NgcImageVerdict[] = kb.judgeNgcImages({
    computeCapability: target.computeCapability,
    driverVersion: target.driverVersion ?? NEWEST_DRIVER,
    cpuArch: target.cpuArch,
  });
  // A driver that runs the image natively beats a newer image it runs only under minor-version
  // compatibility: that mode cannot JIT newer PTX, and NVIDIA's image notes ask for the CUDA's
  // own driver. The newer image is still named in the reason, with what it would need.
  const running = verdicts.filter((v) => v.runs);
  const chosen = running.find((v) => v.driver === "native") ?? running[0];
  const rejections = verdicts.filter((v) => !v.runs).map((v) => `${v.image.tag}: ${v.reason}`);
  if (!chosen) return { choice: null, requiredDriver: null, decisions: [], rejections };
  const image = chosen.image;
  const toolkit = kb.cudaToolkit(image.cuda);
  const requiredDriver = image.minDriverLinux ?? toolkit?.minDriverLinux ?? NEWEST_DRIVER;
  const sources = image.sources.map((s) => s.url);
  const newer = verdicts.filter((v) => v !== chosen && compareVersions(v.image.tag, image.tag) > 0);
  const decisions: Decision[] = [
    {
      topic: "base image",
      choice: image.image,
      reason:
        `newest NGC PyTorch image that runs here${chosen.driver === "native" && running.length > 1 && running[0] !== chosen ? " with its own CUDA driver" : ""}: ${target.driverVersion === null ? `it covers compute capability ${target.computeCapability} on ${target.cpuArch}` : chosen.reason}` +
        (newer.length > 0
          ? `; newer ones are passed over (${newer.map((v) => `${v.image.tag}: ${v.reason}`).join("; ")})`
          : "") +
        `; it brings torch ${image.torch} built with CUDA ${image.cuda}`,
      sources,
    },
  ];
  if (target.driverVersion === null) {
    decisions.push({
      topic: "driver",
      choice: `${requiredDriver} or newer`,
      reason: `the target's driver is not known (pass --driver to plan for yours); CUDA ${image.cuda} needs ${requiredDriver}, and the run script checks it before starting`,
      sources: [...sources, ...(toolkit?.sources.map((s) => s.url) ?? [])],
    });
  }
  const protectedPackages: ProtectedPackage[] = [
    { name: "torch", version: image.torch, why: `${image.image} (knowledge base)` },
    ...Object.entries(image.packages).map(([name, version]) => ({
      name: normalizeName(name),
      version,
      why: `${image.image} (knowledge base)`,
    })),
  ];
  decisions.push({
    topic: "protected packages",
    choice:
      protectedPackages.map((p) => `${p.name}==${p.version ?? "?"}`).join(", ") +
      ", and every other package the image ships",
    reason:
      "the project's requirements are installed into the image's own Python with a constraints file that pins what the image provides (written at build time from `pip list`), so no install can replace its CUDA builds",
    sources,
  });
  return { choice: { image, protected: protectedPackages }, requiredDriver, decisions, rejections };
}
