/**
 * The NGC PyTorch image for a target: among the images that cover its GPU, CPU and driver, the
 * newest whose torch the project's torch requirement accepts (as pip would judge the installed
 * torch: 2.7.0a0 is below ">=2.7"), preferring one that also keeps the project's other pins on
 * what the image ships (numpy ...). An image whose torch fails the pin is never chosen.
 */
import type { Requirement } from "../facts/schema.js";
import type { KnowledgeBase, NgcImageVerdict } from "../kb/index.js";
import type { NgcImageRow } from "../kb/types.js";
import type { ContainerChoice, Decision, ProtectedPackage, TargetMachine } from "./types.js";
import { normalizeName } from "../util/package-name.js";
import { satisfies } from "../util/pep440.js";
import { compareVersions } from "../util/version.js";

/** Stands for "any current driver" when the target's is unknown: the plan then states the one it needs. */
export const NEWEST_DRIVER = "9999";

export interface ContainerOutcome {
  choice: ContainerChoice | null;
  requiredDriver: string | null;
  decisions: Decision[];
  /** Why each image was turned down (newest first), for "container cannot work" messages. */
  rejections: string[];
  /**
   * Images that run here but whose torch the project's torch requirement excludes, as
   * "25.10 (torch 2.9.0a0+145a3a7bda)"; empty when the pin excludes none.
   */
  excludedByPin: string[];
  /** "torch==2.8.0 (requirements.txt:1) excludes 25.10 (torch 2.9.0a0+...)", or null. */
  pinRejection: string | null;
}

/** The image's packages (torch, numpy, bundled ones) with the versions the KB knows. */
export function providedPackages(image: NgcImageRow): ProtectedPackage[] {
  const why = `${image.image} (knowledge base)`;
  const packages: ProtectedPackage[] = [
    { name: "torch", version: image.torch, why },
    ...Object.entries(image.packages).map(([name, version]) => ({ name: normalizeName(name), version, why })),
  ];
  if (image.numpy) packages.push({ name: "numpy", version: image.numpy, why });
  return packages;
}

/** "2.9.0a0+145a3a7bda" -> "2.9.0": the release a pre-release build leads to. */
function releaseOf(version: string): string {
  return /^\d+(\.\d+)*/.exec(version)?.[0] ?? version;
}

/** Does the image's torch satisfy the requirement: true, false, or null (a URL, or unreadable). */
export function imageTorchSatisfies(image: NgcImageRow, requirement: Requirement | null): boolean | null {
  if (!requirement) return true;
  if (requirement.url !== null) return false;
  return satisfies(image.torch, requirement.specifier);
}

/** The project's pins (other than torch) the image's known packages do not satisfy. */
function pinsBroken(image: NgcImageRow, requirements: Requirement[]): Requirement[] {
  const provided = new Map(providedPackages(image).map((p) => [p.name, p.version]));
  return requirements.filter((r) => {
    if (r.normalizedName === "torch") return false;
    const version = provided.get(r.normalizedName);
    if (version === undefined || version === null) return false;
    return r.url !== null || satisfies(version, r.specifier) === false;
  });
}

/** A verdict judged for "any driver" (the driver is not known) says what the image needs instead of naming the placeholder. */
function withoutPlaceholderDriver(reason: string): string {
  return reason
    .replace(`driver ${NEWEST_DRIVER} is at or above its floor `, "its driver floor is ")
    .replace(`driver ${NEWEST_DRIVER} runs`, "a new enough driver runs");
}

export function chooseContainer(
  kb: KnowledgeBase,
  target: TargetMachine,
  requirements: Requirement[] = [],
): ContainerOutcome {
  const torchRequirement = requirements.find((r) => r.normalizedName === "torch") ?? null;
  const verdicts: NgcImageVerdict[] = kb.judgeNgcImages({
    computeCapability: target.computeCapability,
    driverVersion: target.driverVersion ?? NEWEST_DRIVER,
    cpuArch: target.cpuArch,
  });
  const rejections = verdicts.filter((v) => !v.runs).map((v) => `${v.image.tag}: ${v.reason}`);
  const excluded = verdicts.filter((v) => v.runs && imageTorchSatisfies(v.image, torchRequirement) !== true);
  const excludedByPin = excluded.map((v) => `${v.image.tag} (torch ${v.image.torch})`);
  let pinRejection: string | null = null;
  if (excluded.length > 0 && torchRequirement) {
    // NGC's torch is a pre-release of its series (2.9.0a0+...): say so where that is what fails.
    const preRelease = excluded.find(
      (v) =>
        torchRequirement.url === null &&
        satisfies(v.image.torch, torchRequirement.specifier) === false &&
        satisfies(releaseOf(v.image.torch), torchRequirement.specifier) === true,
    );
    pinRejection =
      `${torchRequirement.raw} (${torchRequirement.origin}) excludes ${excludedByPin.join(", ")}` +
      (torchRequirement.url !== null
        ? ": a torch from a URL would replace the image's"
        : preRelease
          ? ` (${preRelease.image.torch} is a pre-release, which pip counts below ${releaseOf(preRelease.image.torch)})`
          : "");
    rejections.unshift(pinRejection);
  }
  const running = verdicts.filter((v) => v.runs && !excluded.includes(v));
  // Prefer an image that also keeps the project's other pins on what it ships (numpy<2), then
  // one the driver runs natively: minor-version compatibility cannot JIT newer PTX, and NVIDIA's
  // image notes ask for the CUDA's own driver. Passed-over images are named in the reason.
  const keeping = running.filter((v) => pinsBroken(v.image, requirements).length === 0);
  const preferred = keeping.length > 0 ? keeping : running;
  const chosen = preferred.find((v) => v.driver === "native") ?? preferred[0];
  if (!chosen)
    return { choice: null, requiredDriver: null, decisions: [], rejections, excludedByPin, pinRejection };
  const image = chosen.image;
  const toolkit = kb.cudaToolkit(image.cuda);
  const requiredDriver = image.minDriverLinux ?? toolkit?.minDriverLinux ?? NEWEST_DRIVER;
  const sources = image.sources.map((s) => s.url);
  const whyPassed = (v: NgcImageVerdict): string => {
    if (excluded.includes(v))
      return `torch ${v.image.torch} fails ${torchRequirement?.raw ?? "the torch pin"}`;
    const broken = pinsBroken(v.image, requirements);
    if (v.runs && broken.length > 0)
      return `it ships what ${broken.map((r) => r.raw).join(", ")} exclude${broken.length === 1 ? "s" : ""}`;
    return target.driverVersion === null ? withoutPlaceholderDriver(v.reason) : v.reason;
  };
  const newer = verdicts.filter((v) => v !== chosen && compareVersions(v.image.tag, image.tag) > 0);
  const pinNote = torchRequirement?.specifier
    ? ` and whose torch the project's ${torchRequirement.raw} (${torchRequirement.origin}) accepts`
    : "";
  const decisions: Decision[] = [
    {
      topic: "base image",
      choice: image.image,
      reason:
        `newest NGC PyTorch image that runs here${chosen.driver === "native" && running.length > 1 && running[0] !== chosen ? " with its own CUDA driver" : ""}${pinNote}: ${target.driverVersion === null ? `it covers compute capability ${target.computeCapability} on ${target.cpuArch}` : chosen.reason}` +
        (newer.length > 0
          ? `; newer ones are passed over (${newer.map((v) => `${v.image.tag}: ${whyPassed(v)}`).join("; ")})`
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
  const protectedPackages = providedPackages(image);
  decisions.push({
    topic: "protected packages",
    choice:
      protectedPackages
        .map((p) => (p.version ? `${p.name}==${p.version}` : `${p.name} (version not sourced)`))
        .join(", ") + ", and every other package the image ships",
    reason:
      "the project's requirements are installed into the image's own Python with a constraints file that pins what the image provides (written at build time from `pip list`), so no install can replace its CUDA builds",
    sources,
  });
  return {
    choice: { image, protected: protectedPackages },
    requiredDriver,
    decisions,
    rejections,
    excludedByPin,
    pinRejection,
  };
}
