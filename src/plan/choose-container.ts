/**
 * The NGC PyTorch image for a target: among the images that cover its GPU, CPU and driver, the
 * newest whose torch the project's torch requirement accepts (as pip would judge the installed
 * torch: 2.7.0a0 is below ">=2.7"), preferring one that also keeps the project's other pins on
 * what the image ships (numpy ...). An image whose torch fails the pin is never chosen.
 */
import { newestTagFirst } from "../kb/image-tag.js";
import type { Requirement } from "../facts/schema.js";
import { DRIVER_FACTS, toolkitSources, type KnowledgeBase, type NgcImageChoice } from "../kb/index.js";

/**
 * One platform image of a tag as the planner weighs it: the KB's verdict (its torch's arch list,
 * its CUDA, the driver; Jetson -igpu images by their JetPack) with the reference to pull.
 */
interface NgcImageVerdict {
  image: NgcImageRow;
  /** nvcr.io/nvidia/pytorch:25.11-py3, or ...-py3-igpu for a Jetson. */
  ref: string;
  runs: boolean;
  /** The driver runs the image's CUDA natively (not only under minor-version compatibility). */
  driver: "native" | "other";
  reason: string;
}

function fromChoice(choice: NgcImageChoice): NgcImageVerdict {
  return {
    image: choice.image,
    ref: choice.ref,
    runs: choice.runs,
    driver: choice.driver.support === "native" || choice.driver.support === "jetpack" ? "native" : "other",
    reason: choice.reason,
  };
}
import type { NgcImageRow } from "../kb/types.js";
import type { ContainerChoice, Decision, PinConflict, ProtectedPackage, TargetMachine } from "./types.js";
import { normalizeName } from "../util/package-name.js";
import { satisfies } from "../util/pep440.js";
import { compareVersions, majorMinor } from "../util/version.js";
import type { DriverVersion } from "../vocabulary/driver-version.js";

/** Stands for "any current driver" when the target's is unknown: the plan then states the one it needs. */
export const NEWEST_DRIVER = "9999";

/** NEWEST_DRIVER as the value the knowledge-base queries take. */
export const ANY_CURRENT_DRIVER: DriverVersion = {
  branch: 9999,
  minor: null,
  patch: null,
  text: NEWEST_DRIVER,
};

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
  /** The exact torch pin moved out for an image of its series (--strategy container), or null. */
  movedPin: PinConflict | null;
}

/** The image's packages (torch, numpy, bundled ones) with the versions the KB knows. */
function providedPackages(image: NgcImageRow): ProtectedPackage[] {
  const why = `${image.image} (knowledge base)`;
  const packages: ProtectedPackage[] = [
    { name: "torch", version: image.torch, why },
    ...Object.entries(image.packages).map(([name, version]) => ({ name: normalizeName(name), version, why })),
  ];
  if (image.numpy) packages.push({ name: "numpy", version: image.numpy, why });
  // torchvision and torchaudio are built for one torch release: a PyPI one (torchvision==0.22.1)
  // requires PyPI's torch (2.7.1) and would replace the image's. Whatever the image ships is kept
  // (pinned from `pip list` at build time), and the Dockerfile checks the import (torchFamilyImports).
  for (const name of TORCH_COMPANIONS)
    if (!packages.some((p) => p.name === name))
      packages.push({
        name,
        version: null,
        why: `built for one torch release; the image's torch ${image.torch} is kept`,
      });
  return packages;
}

/**
 * Packages built for one torch release, never installed over an image's torch from PyPI. triton
 * too: each torch pins its own (pytorch-triton), NGC images ship NVIDIA's (first-hand logs in the
 * KB's ngc rows: "triton 3.8.0" in 25.10, "3.0.0" in 24.05), and where it lacks a GPU's ptxas the
 * plan points it at the toolkit's (jit-toolchain.ts) rather than replacing it.
 */
const TORCH_COMPANIONS = ["torchvision", "torchaudio", "triton"];

/** "2.9.0a0+145a3a7bda" -> "2.9.0": the release a pre-release build leads to. */
function releaseOf(version: string): string {
  return /^\d+(\.\d+)*/.exec(version)?.[0] ?? version;
}

/** The torch pin as the container candidates are held to it (the pin policy's specifier). */
interface ContainerPin {
  requirement: Requirement | null;
  /** What the image's torch must satisfy, as pip judges an installed torch; "" for no pin. */
  specifier: string;
  /**
   * --strategy container: where no image's torch satisfies an exact pin only because NVIDIA's torch
   * is a pre-release of its series (==2.7.1 against 2.7.0a0+...), take the image of the pin's minor
   * (or the nearest newer), and move the pin out of the installed requirements, saying why.
   */
  takeNearestSeries: boolean;
  /** The pin policy changed the pin (no build of the pinned release runs here): `specifier` is the change. */
  changed: boolean;
}

/** Does the image's torch satisfy the pin: true, false, or null (unreadable). */
function imageTorchSatisfies(image: NgcImageRow, pin: ContainerPin): boolean | null {
  if (!pin.requirement || pin.specifier === "") return true;
  if (pin.requirement.url !== null) return false;
  return satisfies(image.torch, pin.specifier);
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

/** "torch==2.8.0 (requirements.txt:1) excludes 25.10 (torch 2.9.0a0+...)", naming a pre-release miss. */
function pinRejectionOf(pin: ContainerPin, excluded: NgcImageVerdict[]): string | null {
  const requirement = pin.requirement;
  if (excluded.length === 0 || !requirement) return null;
  const listed = excluded.map((v) => `${v.image.tag} (torch ${v.image.torch})`).join(", ");
  // NGC's torch is a pre-release of its series (2.9.0a0+...): say so where that is what fails.
  const preRelease = excluded.find(
    (v) =>
      requirement.url === null &&
      satisfies(v.image.torch, pin.specifier) === false &&
      satisfies(releaseOf(v.image.torch), pin.specifier) === true,
  );
  return (
    `${requirement.raw} (${requirement.origin}) excludes ${listed}` +
    (requirement.url !== null
      ? ": a torch from a URL would replace the image's"
      : preRelease
        ? ` (${preRelease.image.torch} is a pre-release, which pip counts below ${releaseOf(preRelease.image.torch)})`
        : "")
  );
}

/**
 * --strategy container with an exact pin no image's torch satisfies: the images of the pin's minor,
 * or of the nearest newer minor that has one. Empty when the pin names no release, or none is newer.
 */
function nearestSeriesImages(pin: ContainerPin, running: NgcImageVerdict[]): NgcImageVerdict[] {
  if (!pin.takeNearestSeries || !pin.requirement || pin.requirement.url !== null) return [];
  const named = /^\s*(?:==|===|~=)\s*(\d+\.\d+)/.exec(pin.specifier);
  if (!named) return [];
  const wanted = named[1]!;
  const series = [...new Set(running.map((v) => majorMinor(v.image.torch)))]
    .filter((s) => compareVersions(s, wanted) >= 0)
    .sort(compareVersions);
  const nearest = series[0];
  return nearest ? running.filter((v) => majorMinor(v.image.torch) === nearest) : [];
}

/** The conflict a moved pin becomes: out of the installed requirements, with the reason. */
function movedPinConflict(requirement: Requirement, image: NgcImageRow, ref: string): PinConflict {
  return {
    requirement,
    provided: image.torch,
    message: `${requirement.raw} (${requirement.origin}): moved out of the installed requirements; ${ref} brings torch ${image.torch}, NVIDIA's build of the ${majorMinor(image.torch)} series (a pre-release to pip, so no image satisfies the exact pin), and the image's torch is kept`,
  };
}

/** Why each newer image was passed over, for the base-image decision. */
function passedOver(
  verdicts: NgcImageVerdict[],
  chosen: NgcImageVerdict,
  excluded: NgcImageVerdict[],
  requirements: Requirement[],
  pin: ContainerPin,
  driverKnown: boolean,
): string {
  const why = (v: NgcImageVerdict): string => {
    if (excluded.includes(v))
      return `torch ${v.image.torch} fails ${pin.requirement?.raw ?? "the torch pin"}`;
    const broken = pinsBroken(v.image, requirements);
    if (v.runs && broken.length > 0)
      return `it ships what ${broken.map((r) => r.raw).join(", ")} exclude${broken.length === 1 ? "s" : ""}`;
    return driverKnown ? v.reason : withoutPlaceholderDriver(v.reason);
  };
  const newer = verdicts.filter((v) => v !== chosen && newestTagFirst(v.image, chosen.image) < 0);
  return newer.length > 0
    ? `; newer ones are passed over (${newer.map((v) => `${v.image.tag}: ${why(v)}`).join("; ")})`
    : "";
}

function protectedDecision(
  image: NgcImageRow,
  protectedPackages: ProtectedPackage[],
  sources: string[],
): Decision {
  return {
    topic: "protected packages",
    choice:
      protectedPackages
        .map((p) => (p.version ? `${p.name}==${p.version}` : `${p.name} (version not sourced)`))
        .join(", ") + ", and every other package the image ships",
    reason:
      "the project's requirements are installed into the image's own Python with a constraints file that pins what the image provides (written at build time from `pip list`), so no install can replace its CUDA builds",
    sources,
  };
}

/** The images that ship the most of the project's compiled extensions (KB extension rows), in their order. */
function mostExtensionsShipped(
  kb: KnowledgeBase,
  images: NgcImageVerdict[],
  requirements: Requirement[],
): NgcImageVerdict[] {
  const extensions = requirements
    .filter((r) => kb.extension(r.normalizedName) !== null)
    .map((r) => r.normalizedName);
  if (extensions.length === 0) return images;
  const shipped = (v: NgcImageVerdict) =>
    Object.keys(v.image.packages).filter((name) => extensions.includes(normalizeName(name))).length;
  const most = Math.max(0, ...images.map(shipped));
  return images.filter((v) => shipped(v) === most);
}

/**
 * The images that run here and whose torch the pin accepts (the pin's exclusions beside them);
 * where none does, the images of the nearest series, the pin then moved.
 */
function pinnedImages(
  verdicts: NgcImageVerdict[],
  pin: ContainerPin,
): { running: NgcImageVerdict[]; excluded: NgcImageVerdict[]; moved: boolean } {
  const excluded = verdicts.filter((v) => v.runs && imageTorchSatisfies(v.image, pin) !== true);
  const running = verdicts.filter((v) => v.runs && !excluded.includes(v));
  if (running.length > 0) return { running, excluded, moved: false };
  const nearest = nearestSeriesImages(pin, excluded);
  return { running: nearest, excluded, moved: nearest.length > 0 && pin.requirement !== null };
}

/**
 * Prefer an image that also keeps the project's other pins on what it ships (numpy<2), then
 * one the driver runs natively: minor-version compatibility cannot JIT newer PTX, and NVIDIA's
 * image notes ask for the CUDA's own driver. Passed-over images are named in the reason.
 */
function preferredImage(
  kb: KnowledgeBase,
  running: NgcImageVerdict[],
  requirements: Requirement[],
): NgcImageVerdict | undefined {
  const keeping = running.filter((v) => pinsBroken(v.image, requirements).length === 0);
  // Then one that ships more of the project's compiled extensions (25.10 bundles flash-attn): NVIDIA's
  // build for its torch instead of an hour of compiling, or a wheel built for another torch.
  const preferred = mostExtensionsShipped(kb, keeping.length > 0 ? keeping : running, requirements);
  return preferred.find((v) => v.driver === "native") ?? preferred[0];
}

/** How the image's torch meets the project's pin, as the base-image reason says it. */
function pinNote(pin: ContainerPin, moved: boolean, image: NgcImageRow): string {
  if (moved)
    return ` and whose torch is the ${majorMinor(image.torch)} series ${pin.requirement!.raw} (${pin.requirement!.origin}) names (the nearest NVIDIA builds)`;
  if (pin.changed)
    return ` and whose torch the changed pin (${pin.requirement!.raw} -> ${pin.specifier}) accepts`;
  if (pin.specifier)
    return ` and whose torch the project's ${pin.requirement!.raw} (${pin.requirement!.origin}) accepts`;
  return "";
}

/** Everything the base-image decision weighs. */
interface ImageWeighing {
  verdicts: NgcImageVerdict[];
  running: NgcImageVerdict[];
  excluded: NgcImageVerdict[];
  moved: boolean;
  requirements: Requirement[];
  pin: ContainerPin;
}

function baseImageDecision(
  chosen: NgcImageVerdict,
  weighing: ImageWeighing,
  target: TargetMachine,
): Decision {
  const { verdicts, running, excluded, moved, requirements, pin } = weighing;
  const image = chosen.image;
  const ownDriver = chosen.driver === "native" && running.length > 1 && running[0] !== chosen;
  const covers =
    target.driverVersion === null
      ? `it covers compute capability ${target.computeCapability} on ${target.cpuArch}`
      : chosen.reason;
  return {
    topic: "base image",
    choice: chosen.ref,
    reason:
      `newest NGC PyTorch image that runs here${ownDriver ? " with its own CUDA driver" : ""}${pinNote(pin, moved, image)}: ${covers}` +
      passedOver(verdicts, chosen, moved ? [] : excluded, requirements, pin, target.driverVersion !== null) +
      `; it brings torch ${image.torch} built with CUDA ${image.cuda}`,
    sources: image.sources.map((s) => s.url),
  };
}

/** Every platform image of every tag, as the KB judges it for the target. */
function imageVerdicts(kb: KnowledgeBase, target: TargetMachine): NgcImageVerdict[] {
  return kb
    .ngcImageVerdicts({
      computeCapability: target.capability,
      gpuName: target.gpuName,
      driverVersion: target.driver,
      cpuArch: target.cpuArch,
    })
    .map(fromChoice);
}

export function chooseContainer(
  kb: KnowledgeBase,
  target: TargetMachine,
  requirements: Requirement[],
  pin: ContainerPin,
): ContainerOutcome {
  const verdicts = imageVerdicts(kb, target);
  const { running, excluded, moved } = pinnedImages(verdicts, pin);
  const pinRejection = pinRejectionOf(pin, excluded);
  const rejections = [
    ...(pinRejection ? [pinRejection] : []),
    ...verdicts.filter((v) => !v.runs).map((v) => `${v.image.tag}: ${v.reason}`),
  ];
  const excludedByPin = excluded.map((v) => `${v.image.tag} (torch ${v.image.torch})`);
  const chosen = preferredImage(kb, running, requirements);
  if (!chosen)
    return {
      choice: null,
      requiredDriver: null,
      decisions: [],
      rejections,
      excludedByPin,
      pinRejection,
      movedPin: null,
    };
  const image = chosen.image;
  const toolkit = kb.cudaToolkit(image.cuda);
  const requiredDriver = image.minDriverLinux ?? toolkit?.minDriverLinux ?? NEWEST_DRIVER;
  const sources = image.sources.map((s) => s.url);
  const decisions = [
    baseImageDecision(chosen, { verdicts, running, excluded, moved, requirements, pin }, target),
  ];
  if (target.driverVersion === null)
    decisions.push({
      topic: "driver",
      choice: `${requiredDriver} or newer`,
      reason: `the target's driver is not known (pass --driver to plan for yours); CUDA ${image.cuda} needs ${requiredDriver}, and the run script checks it before starting`,
      sources: [...sources, ...toolkitSources(toolkit, DRIVER_FACTS)],
    });
  const protectedPackages = providedPackages(image);
  decisions.push(protectedDecision(image, protectedPackages, sources));
  const required = new Set(requirements.map((r) => r.normalizedName));
  return {
    choice: {
      image,
      ref: chosen.ref,
      protected: protectedPackages,
      imports: TORCH_COMPANIONS.filter((name) => required.has(name)),
    },
    requiredDriver,
    decisions,
    rejections,
    excludedByPin,
    pinRejection: moved ? null : pinRejection,
    movedPin: moved ? movedPinConflict(pin.requirement!, image, chosen.ref) : null,
  };
}
