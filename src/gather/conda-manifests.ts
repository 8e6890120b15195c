/** The pixi and conda manifests of a project directory, read through the caller's file reader. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CondaManifest } from "../facts/schema.js";
import { parseCondaEnvironment } from "./conda-env.js";
import { parsePixiManifest } from "./pixi.js";

export function readCondaManifests(dir: string, readText: (path: string) => string): CondaManifest[] {
  const manifests: CondaManifest[] = [];
  const pixi = join(dir, "pixi.toml");
  if (existsSync(pixi)) {
    const manifest = parsePixiManifest(readText(pixi), pixi);
    if (manifest) manifests.push(manifest);
  } else {
    // pixi reads [tool.pixi] from pyproject.toml only when there is no pixi.toml.
    const pyproject = join(dir, "pyproject.toml");
    if (existsSync(pyproject)) {
      const manifest = parsePixiManifest(readText(pyproject), pyproject, "tool.pixi");
      if (manifest) manifests.push(manifest);
    }
  }
  for (const name of ["environment.yml", "environment.yaml"]) {
    const path = join(dir, name);
    if (existsSync(path)) manifests.push(parseCondaEnvironment(readText(path), path));
  }
  return manifests;
}
