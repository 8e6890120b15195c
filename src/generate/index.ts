/** All the files of a plan, consistent with one another: one generator per artifact. */
import type { ContainerPlan, NativePlan, Plan } from "../plan/types.js";
import { renderCompose } from "./compose.js";
import { renderConstraints, renderRequirements } from "./constraints.js";
import { renderDevcontainer } from "./devcontainer.js";
import { renderDockerfile } from "./dockerfile.js";
import { renderDockerignore } from "./dockerignore.js";
import { CONSTRAINTS_FILE, REQUIREMENTS_FILE } from "./paths.js";
import { pinPyproject } from "./pyproject-pin.js";
import { renderRunContainer } from "./run-container.js";
import { renderSetupMd } from "./setup-md.js";
import { renderSetupNative } from "./setup-native.js";
import { renderSetupPixi } from "./setup-pixi.js";
import { pinPixi } from "./pixi-pin.js";
import { renderSetupConda } from "./setup-conda.js";
import { environmentName, pinCondaEnvironment } from "./conda-pin.js";
import type { GeneratedFile } from "./types.js";

export type { GeneratedFile } from "./types.js";

function file(path: string, content: string, purpose: string, executable = false): GeneratedFile {
  return { path, content, purpose, executable, kind: "generated" };
}

/** The user's manifests as they are now: native plans edit pyproject.toml, pixi.toml or environment.yml. */
export interface CurrentManifests {
  pyproject: string | null;
  pixi: string | null;
  /** environment.yml (or .yaml): its file name and text. */
  conda?: { file: string; text: string } | null;
}

/** A pixi workspace's files: the setup script, and pixi.toml edited to the torch that runs. */
function pixiFiles(plan: NativePlan, current: CurrentManifests, notes: string[]): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  files.push(
    file(
      "scripts/setup-pixi.sh",
      renderSetupPixi(plan),
      "checks the driver, runs pixi install, shows the torch",
      true,
    ),
  );
  if (current.pixi !== null) {
    const pin = pinPixi(plan, current.pixi);
    notes.push(...pin.notes.map((n) => `pixi.toml: ${n}`));
    files.push({
      path: "pixi.toml",
      content: pin.content,
      purpose: "torch from the PyTorch index that runs on this GPU; changed pins in place",
      executable: false,
      kind: "user-file",
    });
  }
  return files;
}

/** A conda environment's files: the setup script, and environment.yml edited to the torch that runs. */
function condaFiles(plan: NativePlan, current: CurrentManifests, notes: string[]): GeneratedFile[] {
  const conda = current.conda ?? null;
  const manifest = conda?.file ?? "environment.yml";
  const envName = conda ? environmentName(conda.text) : null;
  const files = [
    file(
      "scripts/setup-conda.sh",
      renderSetupConda(plan, manifest, envName),
      "checks the driver, runs conda env update --prune (mamba where installed), shows the torch",
      true,
    ),
  ];
  const pin = conda ? pinCondaEnvironment(plan, conda.text, manifest) : null;
  if (conda && pin) notes.push(...pin.notes);
  // A file that already asks for the torch that runs is left alone (no backup, no write).
  if (conda && pin && pin.content !== conda.text)
    files.push({
      path: manifest,
      content: pin.content,
      purpose: "torch from the PyTorch index that runs on this GPU (pip: list); changed pins in place",
      executable: false,
      kind: "user-file",
    });
  return files;
}

/** A container plan's files: the image, its compose service and devcontainer, the run script, the pins. */
function containerFiles(plan: ContainerPlan): GeneratedFile[] {
  return [
    file(
      "Dockerfile",
      renderDockerfile(plan),
      "the image: NGC base, pinned base packages, source builds, the project's requirements",
    ),
    file("compose.yaml", renderCompose(plan), "the container(s) with GPU access, IPC, limits and volumes"),
    file(
      ".dockerignore",
      renderDockerignore(plan),
      "keeps venvs, caches, data and credentials out of the image",
    ),
    file(
      ".devcontainer/devcontainer.json",
      renderDevcontainer(plan),
      "VS Code / devcontainer CLI: the compose service",
    ),
    file(
      "scripts/run-container.sh",
      renderRunContainer(plan),
      "build and start the container (checks the driver first)",
      true,
    ),
    file(CONSTRAINTS_FILE, renderConstraints(plan), "pins for what the image provides"),
    file(
      REQUIREMENTS_FILE,
      renderRequirements(plan),
      "the project's requirements as installed into the image",
    ),
  ];
}

/** A uv venv's files: the setup script, the constraints, and pyproject.toml routed to the planned index. */
function uvFiles(plan: NativePlan, current: CurrentManifests, notes: string[]): GeneratedFile[] {
  const files = [
    file(
      "scripts/setup-native.sh",
      renderSetupNative(plan),
      "creates .venv with torch from the right PyTorch index",
      true,
    ),
    file(
      CONSTRAINTS_FILE,
      renderConstraints(plan),
      "keeps torch on the planned release while the project installs",
    ),
  ];
  if (current.pyproject === null) return files;
  const pin = pinPyproject(plan, current.pyproject);
  notes.push(`pyproject.toml: ${pin.note}`);
  if (pin.content !== null && pin.content !== current.pyproject)
    files.push({
      path: "pyproject.toml",
      content: pin.content,
      purpose: "torch routed to the planned PyTorch index (lines appended)",
      executable: false,
      kind: "user-file",
    });
  return files;
}

/** A native plan's files, by where the project's environment lives. */
function nativeFiles(plan: NativePlan, current: CurrentManifests, notes: string[]): GeneratedFile[] {
  switch (plan.native.environment) {
    case "pixi":
      return pixiFiles(plan, current, notes);
    case "conda":
      return condaFiles(plan, current, notes);
    default:
      return uvFiles(plan, current, notes);
  }
}

/**
 * @param current the project's manifests as they are now (native plans edit them).
 * @returns the files, and notes for the summary (e.g. why pyproject.toml was left alone).
 */
export function generateFiles(
  plan: Plan,
  current: CurrentManifests,
): { files: GeneratedFile[]; notes: string[] } {
  const notes: string[] = [];
  const files = plan.strategy === "container" ? containerFiles(plan) : nativeFiles(plan, current, notes);
  files.push(file("SETUP.md", renderSetupMd(plan, files), "this explanation"));
  return { files, notes };
}
