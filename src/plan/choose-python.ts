/**
 * The venv's Python for a native plan: the newest one that the torch build has wheels for, that
 * requires-python accepts, and that every pinned compiled dependency the knowledge base knows has
 * wheels for ("numpy<2" stops at 3.12: no numpy 1.x wheel exists for 3.13). Dependencies the KB
 * knows as compiled but without a wheel-Python row are named as "not known", not guessed.
 */
import type { Requirement } from "../facts/schema.js";
import {
  describeWheelPythons,
  hasWheelFor,
  type KnowledgeBase,
  type WheelPythonsAnswer,
} from "../kb/index.js";
import type { TorchBuildRow } from "../kb/types.js";
import { normalizeName } from "../util/package-name.js";
import { satisfies } from "../util/pep440.js";
import { compareVersions, majorMinor, versionParts } from "../util/version.js";

export interface PythonChoice {
  python: string;
  reason: string;
  sources: string[];
}

interface PythonRefusal {
  python: null;
  /** Why no Python of this build fits: names the build's Pythons and what excluded each. */
  reason: string;
}

/** A bound on the project's Python: pyproject's requires-python, or a pixi / environment.yml `python` dependency. */
export interface PythonLimit {
  /** PEP 440 ("==3.11.*", ">=3.9"). */
  specifier: string;
  /** The manifest line it comes from ("python = \"3.11.*\"", pixi.toml:16); null for requires-python. */
  raw: string | null;
  origin: string | null;
  /** A dependency's own requires-python (knowledge base): no line of the project's changes it. */
  dependency?: boolean;
}

export interface PythonInputs {
  /** --python, else the target's own Python (a gathered machine). */
  wanted: string | null;
  wantedOrigin: "--python" | "the target's Python" | null;
  pythonLimits: PythonLimit[];
  requirements: Requirement[];
}

/**
 * The requires-python of the project's dependencies where the KB knows the release that installs
 * (uv.lock's, an exact pin's, or the one release row an unpinned name has): limits like the
 * project's own, except that no manifest line of the user's can change them.
 */
export function dependencyPythonLimits(
  kb: KnowledgeBase,
  requirements: Requirement[],
  locked: Map<string, string>,
): PythonLimit[] {
  const limits: PythonLimit[] = [];
  for (const requirement of requirements) {
    if (WITH_THE_BUILD.has(requirement.normalizedName)) continue;
    const exact = /^\s*===?\s*([0-9][0-9a-z.+!]*)\s*$/i.exec(requirement.specifier)?.[1] ?? null;
    const version = locked.get(requirement.normalizedName) ?? exact;
    const answer = kb.packageRequirements(requirement.normalizedName, version);
    const pythons = new Set(answer.rows.map((row) => row.requiresPython ?? ""));
    const only = pythons.size === 1 ? [...pythons][0] : undefined;
    if (!only) continue;
    limits.push({
      specifier: only,
      raw: `${requirement.name}${version ? ` ${version}` : ""} requires-python ${only}`,
      origin:
        version && locked.has(requirement.normalizedName) ? "uv.lock, knowledge base" : "knowledge base",
      dependency: true,
    });
  }
  return limits;
}

function limitName(limit: PythonLimit, style: "excluded" | "allowed"): string {
  if (limit.raw !== null) return `${limit.raw} (${limit.origin})`;
  return style === "excluded" ? `requires-python ${limit.specifier}` : `requires-python (${limit.specifier})`;
}

/** What the knowledge base says about each requirement's wheel Pythons on this platform. */
function pinnedWheelPythons(
  kb: KnowledgeBase,
  requirements: Requirement[],
  platform: TorchBuildRow["platform"],
): { known: Array<{ requirement: Requirement; answer: WheelPythonsAnswer }>; notKnown: string[] } {
  const known: Array<{ requirement: Requirement; answer: WheelPythonsAnswer }> = [];
  const notKnown: string[] = [];
  for (const requirement of requirements) {
    if (requirement.url !== null) continue;
    const answer = kb.wheelPythons(requirement.normalizedName, requirement.specifier, platform);
    if (answer.status === "known") known.push({ requirement, answer });
    else if (answer.status === "not-in-table")
      notKnown.push(
        `${requirement.raw}: the knowledge base has wheel Pythons for other ${requirement.name} releases only`,
      );
    else if (isCompiled(kb, requirement.normalizedName))
      notKnown.push(
        `${requirement.name}: compiled, but the Pythons of its ${platform} wheels are not in the knowledge base`,
      );
  }
  return { known, notKnown };
}

/** An extension the KB knows ships compiled code (not one that only compiles kernels at run time). */
function isCompiled(kb: KnowledgeBase, name: string): boolean {
  const row = kb.extension(name);
  if (!row) return false;
  const shipsCode =
    row.supportedComputeCapabilities.length > 0 || (row.builds ?? []).some((b) => b.targets.length > 0);
  return shipsCode || !row.distribution.includes("jit");
}

/** Torch and its family come with the build; everything else needs its own Python facts. */
const WITH_THE_BUILD = new Set(["torch", "torchvision", "torchaudio", "triton", "pytorch-triton"]);

/** Requirements whose supported Pythons the KB does not know (URLs and the torch family aside). */
function unknownPythonSupport(
  requirements: Requirement[],
  known: Array<{ requirement: Requirement }>,
): Requirement[] {
  const knownNames = new Set(known.map((k) => k.requirement.normalizedName));
  return requirements.filter(
    (r) => r.url === null && !WITH_THE_BUILD.has(r.normalizedName) && !knownNames.has(r.normalizedName),
  );
}

function describeUnsure(requirements: Requirement[]): string {
  const names = requirements.map((r) => r.name);
  return names.length <= 3
    ? names.join(", ")
    : `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`;
}

type KnownWheels = Array<{ requirement: Requirement; answer: WheelPythonsAnswer }>;

/** What every answer weighs: the build's plain Pythons (newest first) and the pinned packages' wheel Pythons. */
interface PythonEvidence {
  plain: string[];
  known: KnownWheels;
  /** "; not known: ..." for requirements whose wheel Pythons the KB lacks, "" where none. */
  unknownNote: string;
  sources: string[];
}

function pythonEvidence(
  kb: KnowledgeBase,
  build: TorchBuildRow,
  requirements: Requirement[],
): PythonEvidence {
  const plain = build.pythons
    .filter((p) => /^\d+\.\d+$/.test(p))
    .sort(compareVersions)
    .reverse();
  const { known, notKnown } = pinnedWheelPythons(kb, requirements, build.platform);
  const pinSources = known.flatMap(({ answer }) =>
    answer.rows.flatMap((row) => row.sources.map((s) => s.url)),
  );
  return {
    plain,
    known,
    unknownNote: notKnown.length > 0 ? `; not known: ${notKnown.join("; ")}` : "",
    sources: [...build.sources.map((s) => s.url), ...pinSources],
  };
}

/** The Python asked for (--python, the target's own): taken where the build has a wheel for it, saying what pip would compile. */
function wantedPython(
  build: TorchBuildRow,
  inputs: PythonInputs & { wanted: string },
  evidence: PythonEvidence,
): PythonChoice | PythonRefusal {
  const wanted = majorMinor(inputs.wanted);
  if (!evidence.plain.includes(wanted))
    return {
      python: null,
      reason: `no ${build.variant} wheel for Python ${wanted} (${inputs.wantedOrigin}); wheels: ${evidence.plain.join(", ")}`,
    };
  const lacking = evidence.known.filter(({ answer }) => !hasWheelFor(answer, wanted));
  return {
    python: wanted,
    reason:
      (inputs.wantedOrigin === "--python"
        ? "asked with --python"
        : `the target's Python is ${inputs.wanted}`) +
      (lacking.length > 0
        ? `; but ${lacking.map(({ requirement, answer }) => `${requirement.raw} has wheels for ${describeWheelPythons(answer)} only`).join(", ")}, so pip would build it from source`
        : "") +
      evidence.unknownNote,
    sources: evidence.sources,
  };
}

/** Requirements whose Pythons nothing tells: no wheel-Pythons row, no requires-python from the KB, not of the torch family. */
function unsureRequirements(inputs: PythonInputs, known: KnownWheels): Requirement[] {
  const knownByKb = new Set(
    inputs.pythonLimits
      .filter((l) => l.dependency)
      .map((l) => normalizeName((l.raw ?? "").split(" ")[0] ?? "")),
  );
  return unknownPythonSupport(inputs.requirements, known).filter((r) => !knownByKb.has(r.normalizedName));
}

/** The reason for the chosen Python: newest (or one below), what allowed it, what was passed over. */
function fitReason(
  build: TorchBuildRow,
  inputs: PythonInputs,
  evidence: PythonEvidence,
  weighed: { stepDown: boolean; excluded: string[] },
): string {
  const limits = [
    ...inputs.pythonLimits.map((limit) => limitName(limit, "allowed")),
    ...evidence.known.map(
      ({ requirement, answer }) => `${requirement.raw} (wheels for ${describeWheelPythons(answer)})`,
    ),
  ];
  return (
    `${weighed.stepDown ? "one below the newest" : "newest"} Python with a ${build.variant} torch ${build.torch} wheel` +
    (limits.length > 0 ? ` that ${limits.join(" and ")} allow${limits.length === 1 ? "s" : ""}` : "") +
    (weighed.excluded.length > 0 ? `; passed over: ${weighed.excluded.join("; ")}` : "") +
    evidence.unknownNote
  );
}

export function choosePython(
  kb: KnowledgeBase,
  build: TorchBuildRow,
  inputs: PythonInputs,
): PythonChoice | PythonRefusal {
  const evidence = pythonEvidence(kb, build, inputs.requirements);
  if (inputs.wanted) return wantedPython(build, { ...inputs, wanted: inputs.wanted }, evidence);
  const excluded: string[] = [];
  const fitting: string[] = [];
  for (const python of evidence.plain) {
    const why = whyNotPython(python, inputs.pythonLimits, evidence.known);
    if (why) excluded.push(`${python}: ${why}`);
    else fitting.push(python);
  }
  // Where some requirement's Pythons are not known, the newest Python is where a package is most
  // likely to lack a wheel or exclude it (unsloth 2025.12.9: <3.14): stay one minor below it, where
  // another Python fits.
  const unsure = unsureRequirements(inputs, evidence.known);
  const stepDown = unsure.length > 0 && fitting.length > 1;
  if (stepDown)
    excluded.unshift(
      `${fitting[0]}: the newest that fits, and the Pythons ${describeUnsure(unsure)} support are not known`,
    );
  const python = fitting[stepDown ? 1 : 0];
  if (!python)
    return {
      python: null,
      reason: `no Python with a ${build.variant} wheel (${evidence.plain.join(", ")}) fits: ${excluded.join("; ")}`,
    };
  return {
    python,
    reason: fitReason(build, inputs, evidence, { stepDown, excluded }),
    sources: evidence.sources,
  };
}

/** Why a Python of the build does not fit: a Python pin excludes it, or a pinned compiled package has no wheel for it. */
function whyNotPython(
  python: string,
  limits: PythonLimit[],
  known: Array<{ requirement: Requirement; answer: WheelPythonsAnswer }>,
): string | null {
  const outside = limits.find((limit) => satisfies(`${python}.0`, limit.specifier) === false);
  if (outside) return limitName(outside, "excluded");
  const lacking = known.find(({ answer }) => !hasWheelFor(answer, python));
  if (lacking)
    return `${lacking.requirement.raw} (${lacking.requirement.origin}) has wheels for ${describeWheelPythons(lacking.answer)} only (${lacking.requirement.name} ${lacking.answer.releases[lacking.answer.releases.length - 1]})`;
  return null;
}

/** A Python pin changed once because no runnable build has wheels for any Python it allows. */
export interface PythonPinChange {
  limit: PythonLimit;
  /** The Python the plan uses instead ("3.10"). */
  python: string;
  /** The line as it would read ('python = "3.10.*"'), or the requires-python value. */
  to: string;
}

function pythonDistance(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = versionParts(a);
  const [bMajor = 0, bMinor = 0] = versionParts(b);
  return Math.abs(aMajor * 100 + aMinor - (bMajor * 100 + bMinor));
}

/**
 * The smallest change to the project's Python pins that lets this build run: each pin that excludes
 * every Python the build has wheels for moves to the nearest one (the newer on a tie). Null when
 * the pins already allow one of its Pythons, or a pin names no version to be near to.
 */
export function relaxPythonPins(build: TorchBuildRow, limits: PythonLimit[]): PythonPinChange[] | null {
  const pythons = build.pythons.filter((p) => /^\d+\.\d+$/.test(p)).sort(compareVersions);
  if (pythons.some((p) => limits.every((limit) => satisfies(`${p}.0`, limit.specifier) !== false)))
    return null;
  const changes: PythonPinChange[] = [];
  for (const limit of limits) {
    if (pythons.some((p) => satisfies(`${p}.0`, limit.specifier) !== false)) continue;
    // A dependency's requires-python is not the user's to change: no smaller change exists.
    if (limit.dependency) return null;
    const anchor = /\d+\.\d+/.exec(limit.specifier)?.[0];
    if (!anchor) return null;
    const python = [...pythons]
      .reverse()
      .reduce((best, p) => (pythonDistance(p, anchor) < pythonDistance(best, anchor) ? p : best));
    const to = limit.raw ? limit.raw.replace(/\d+\.\d+(?:\.\d+)?(?:\.\*)?/, `${python}.*`) : `>=${python}`;
    changes.push({ limit, python, to });
  }
  return changes;
}

/** The one conflict line of a changed Python pin, with its diff. */
export function pythonPinChangeMessage(change: PythonPinChange, build: TorchBuildRow, gpu: string): string {
  const line = change.limit.raw ?? `requires-python = "${change.limit.specifier}"`;
  const where = change.limit.origin ?? "pyproject.toml";
  const to = change.limit.raw ? change.to : `requires-python = "${change.to}"`;
  return `${line} (${where}): torch ${build.torch} ${build.variant}, which runs on ${gpu}, has wheels for Python ${build.pythons.join(", ")} only; the nearest is ${change.python}, so the plan uses it. Change the line: ${where}: ${line}  ->  ${to}`;
}
