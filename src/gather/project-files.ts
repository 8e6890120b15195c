/**
 * Which manifests a directory holds, with file-system calls only: doctor asks this before it
 * starts the probe, and the parsers (TOML, YAML) load only when there is something to parse.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** File names that make a directory a project beside pyproject.toml and requirements*.txt (read by conda-manifests.ts). */
const CONDA_MANIFEST_NAMES = ["pixi.toml", "environment.yml", "environment.yaml"];

const REQUIREMENTS_NAME = /^requirements.*\.txt$/;

/** True when `dir` holds a manifest gpuprep reads. */
export function hasProjectManifest(dir: string): boolean {
  return manifestFiles(dir).length > 0;
}

export function manifestFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found = names.filter(
    (n) =>
      n === "pyproject.toml" ||
      n === "uv.lock" ||
      REQUIREMENTS_NAME.test(n) ||
      CONDA_MANIFEST_NAMES.includes(n),
  );
  if (names.includes("requirements") && existsSync(join(dir, "requirements"))) {
    try {
      for (const n of readdirSync(join(dir, "requirements")))
        if (n.endsWith(".txt")) found.push(join("requirements", n));
    } catch {
      // not a directory
    }
  }
  return found.sort();
}
