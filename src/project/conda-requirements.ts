/**
 * The PyPI requirements a pixi workspace or a conda environment.yml stands for, so `init` plans
 * them like any other project's: the default pixi environment's conda and PyPI dependencies (or
 * the environment file's), conda names mapped to PyPI names (pytorch -> torch), conda version specs
 * turned into PEP 440 ones. Packages that are conda's business (python, pip, CUDA toolkit parts,
 * compilers, system libraries) are left out and named in `notes`.
 */
import type { CondaDependency, CondaManifest, ProjectFacts, Requirement } from "../facts/schema.js";
import { normalizeName } from "../util/package-name.js";
import { basename } from "node:path";
import { pytorchCudaIndexUrl } from "./routes.js";

/** Conda package names whose PyPI distribution is named differently. */
const PYPI_NAME: Record<string, string> = {
  pytorch: "torch",
  "pytorch-gpu": "torch",
  "pytorch-cpu": "torch",
  "matplotlib-base": "matplotlib",
  "py-opencv": "opencv-python",
};

/** Packaging tools the plan's image or venv provides (python itself becomes a pin on the venv's Python). */
const PROVIDED = /^(pip|setuptools|wheel)$/;
/** Conda-only packages: CUDA toolkit parts, selectors, compilers, system libraries. */
const CONDA_ONLY =
  /^(cuda-.*|cudatoolkit|cudnn|nccl|libcu.*|libnv.*|nvidia-.*|pytorch-cuda|pytorch-mutex|cpuonly|libtorch|mkl.*|blas|libblas|liblapack|openblas|_.*|lib(gcc|stdcxx|gomp).*|.*-compiler|compilers|gcc.*|gxx.*|ffmpeg|git|git-lfs|nodejs|openjdk|maven|bash|curl)$/;

/** A `python` dependency of the default environment: the venv's Python is held to it too. */
export interface CondaPythonPin {
  specifier: string;
  raw: string;
  origin: string;
}

interface CondaRequirements {
  requirements: Requirement[];
  pythonPins: CondaPythonPin[];
  /** What was left out or changed, one line per manifest. */
  notes: string[];
}

/** The conda version spec as PEP 440, or null when it has no PEP 440 form ("2.5|2.6"). */
function pep440(spec: string): string | null {
  if (spec === "") return "";
  if (spec.includes("|")) return null;
  return spec
    .split(",")
    .map((clause) => {
      const text = clause.trim().replace(/\s+/g, "");
      if (/^[<>=!~]/.test(text)) return text.replace(/^=(?!=)/, "==");
      return `==${text}`;
    })
    .join(",");
}

const PEP440_CLAUSE = /^(===|~=|==|!=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+$/;

function toRequirement(dep: CondaDependency): Requirement | null {
  const name = PYPI_NAME[dep.name] ?? dep.name;
  const spec = pep440(dep.version);
  if (spec === null || (spec !== "" && !spec.split(",").every((c) => PEP440_CLAUSE.test(c)))) return null;
  return {
    name,
    normalizedName: normalizeName(name),
    specifier: spec,
    extras: [],
    marker: null,
    url: null,
    raw: `${name}${spec}`,
    origin: dep.origin,
  };
}

/** The default pixi environment's features; an environment.yml has one implied environment. */
export function defaultFeatures(manifest: CondaManifest): Set<string | null> {
  if (manifest.kind !== "pixi") return new Set([null]);
  return new Set(["default", ...(manifest.environments["default"] ?? [])]);
}

function plainRequirement(requirement: Requirement): Requirement {
  const { name, normalizedName, specifier, extras, marker, url, raw, origin } = requirement;
  return { name, normalizedName, specifier, extras, marker, url, raw, origin };
}

export function condaRequirements(project: ProjectFacts): CondaRequirements {
  const requirements: Requirement[] = [];
  const pythonPins: CondaPythonPin[] = [];
  const notes: string[] = [];
  for (const manifest of project.condaManifests ?? []) {
    const file = basename(manifest.path);
    const features = defaultFeatures(manifest);
    const left: string[] = [];
    const unconverted: string[] = [];
    const platformOnly: string[] = [];
    for (const dep of manifest.dependencies) {
      if (!features.has(dep.feature)) continue;
      if (dep.platform !== null) {
        platformOnly.push(`${dep.name} (${dep.platform})`);
        continue;
      }
      if (dep.name === "python") {
        const specifier = pep440(dep.version);
        if (specifier) pythonPins.push({ specifier, raw: dep.raw, origin: dep.origin });
        else if (specifier === null) unconverted.push(dep.raw);
        continue;
      }
      if (PROVIDED.test(dep.name)) continue;
      // pytorch-cuda=12.1 picks torch's CUDA build: read as a route to cu121 (torch-routes.ts).
      if (dep.name === "pytorch-cuda" && pytorchCudaIndexUrl(dep.version) !== null) continue;
      if (CONDA_ONLY.test(dep.name)) {
        left.push(dep.name);
        continue;
      }
      const requirement = toRequirement(dep);
      if (requirement) requirements.push(requirement);
      else unconverted.push(dep.raw);
    }
    for (const dep of manifest.pypiDependencies) {
      if (!features.has(dep.feature) || dep.platform !== null) continue;
      requirements.push(plainRequirement(dep));
    }
    if (left.length > 0)
      notes.push(
        `${file}: ${left.join(", ")} left out: conda packages the image or venv does not install from PyPI`,
      );
    if (unconverted.length > 0)
      notes.push(`${file}: ${unconverted.join(", ")} left out: no PEP 440 form of the version spec`);
    if (platformOnly.length > 0)
      notes.push(`${file}: platform-only dependencies left out: ${platformOnly.join(", ")}`);
    const renamed = manifest.dependencies.filter((d) => features.has(d.feature) && PYPI_NAME[d.name]);
    if (renamed.length > 0)
      notes.push(
        `${file}: ${renamed.map((d) => `${d.name} -> ${normalizeName(PYPI_NAME[d.name]!)}`).join(", ")} (conda name -> PyPI name); the plan does not use ${manifest.kind === "pixi" ? "pixi" : "conda"} itself`,
      );
  }
  return { requirements, pythonPins, notes };
}
