/**
 * What installing the project here would put in place of torch, read from its manifests before
 * anything is installed: one prediction per install command (uv sync, pip install -r FILE,
 * pip install ., pixi install [-e ENV], conda env create), each with the manifest lines that
 * decide it and the build(s) it gets, or why that is not known. Pure: Facts + knowledge base.
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { linuxMarkers } from "./markers.js";
import type { InstallPrediction, Platform, PredictionContext } from "./types.js";
import { predictCondaManifests } from "./predict-conda.js";
import { predictWheelInstalls } from "./predict-wheel.js";

export type { InstallPrediction } from "./types.js";

export function platformOfCpu(cpuArch: string): Platform | null {
  if (cpuArch === "x86_64") return "linux-x86_64";
  if (cpuArch === "aarch64") return "linux-aarch64";
  return null;
}

/** Every install of torch the project's manifests describe, for this machine's platform. */
export function predictTorchInstalls(facts: Facts, kb: KnowledgeBase): InstallPrediction[] {
  const project = facts.project;
  const platform = platformOfCpu(facts.host.cpuArch);
  if (!project || !platform || !/linux/i.test(facts.host.os.system)) return [];
  const ctx: PredictionContext = {
    facts,
    kb,
    platform,
    projectDir: project.dir,
    markers: linuxMarkers(facts.host.cpuArch, facts.python.interpreter.version),
  };
  return [...predictWheelInstalls(ctx), ...predictCondaManifests(ctx)];
}
