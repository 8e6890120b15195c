/**
 * One pin policy for every strategy (issue 22 item 2). Before a container or a native base is
 * chosen, the project's torch pin is judged against everything that runs on the target: the torch
 * builds with code for the GPU and the NGC images that run there.
 * - A pin that some of them satisfies is kept; each candidate is then held to it.
 * - A pin that none satisfies (2.5.1 on sm_121) is changed once, to the nearest release series that
 *   a wheel with code for the GPU exists for (an image's series where no wheel runs), and that change
 *   is said once, as a diff of the manifest line. Container and native plans
 *   then both plan for the changed pin, so neither "rejects for the pin" while the other breaks it.
 */
import type { ProjectFacts, Requirement } from "../facts/schema.js";
import { satisfies } from "../util/pep440.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { anchorSeries, nearestSeries } from "../project/nearest-series.js";
import { seriesAccepts } from "../project/series.js";
import { torchPin } from "../project/torch-pin.js";
import type { PinConflict } from "./types.js";

export interface PinChange {
  requirement: Requirement;
  /** "pixi.toml:12" */
  origin: string;
  /** The manifest line now and after the change, as the user would write it. */
  from: string;
  to: string;
  /** The release series the change moves to ("2.9"). */
  series: string;
}

interface TorchPinPolicy {
  requirement: Requirement | null;
  /** What every candidate must satisfy: the pin's public specifier, or the changed one ("" for none). */
  specifier: string;
  change: PinChange | null;
}

/** What runs on the target, as the policy weighs it. */
export interface RunnableTorch {
  /** Every release series the KB knows a build of, on any GPU ("2.14"): the edge of what can be judged. */
  knownSeries: string[];
  /** Release series of builds with code for the GPU ("2.9"). */
  nativeSeries: string[];
  /** The torch of each image that runs ("2.9.0a0+50eac811a6"), judged as pip judges an installed one. */
  imageTorches: string[];
}

function newestKnown(runnable: RunnableTorch): string {
  return [...runnable.knownSeries].sort(compareVersions).pop() ?? "0";
}

/** The manifest line with the new series, in its own syntax (a conda spec in pixi.toml, PEP 508 elsewhere). */
function changedLine(
  project: ProjectFacts | null,
  requirement: Requirement,
  series: string,
): { from: string; to: string } {
  const conda = project?.condaManifests
    ?.flatMap((m) => m.dependencies)
    .find((dep) => dep.origin === requirement.origin && ["pytorch", "pytorch-gpu"].includes(dep.name));
  if (conda) {
    // The version as written in the line (pixi `pytorch = "2.5.1"`, environment.yml `pytorch=2.5.1`).
    const written = /\d+(?:\.\d+)*(?:\.\*)?/;
    const to = written.test(conda.raw)
      ? conda.raw.replace(written, `${series}.*`)
      : `${conda.raw}=${series}.*`;
    return { from: conda.raw, to };
  }
  const extras = requirement.extras.length > 0 ? `[${requirement.extras.join(",")}]` : "";
  const marker = requirement.marker ? `; ${requirement.marker}` : "";
  return { from: requirement.raw, to: `${requirement.name}${extras}==${series}.*${marker}` };
}

export function decideTorchPin(
  project: ProjectFacts | null,
  requirement: Requirement | null,
  runnable: RunnableTorch,
): TorchPinPolicy {
  if (!requirement) return { requirement, specifier: "", change: null };
  const specifier = torchPin(requirement).publicSpecifier;
  if (specifier === "" || requirement.url !== null) return { requirement, specifier, change: null };
  const kept =
    runnable.nativeSeries.some((series) => seriesAccepts(series, specifier)) ||
    runnable.imageTorches.some((torch) => satisfies(torch, specifier) === true);
  if (kept) return { requirement, specifier, change: null };
  // The changed line must install anywhere the manifest is used: a release PyPI or the PyTorch index
  // serves (NGC's 2.6.0a0 is no such release). Images are the fallback where no wheel runs at all.
  const pool =
    runnable.nativeSeries.length > 0 ? runnable.nativeSeries : runnable.imageTorches.map(majorMinor);
  const anchor = anchorSeries(specifier);
  // A pin on releases newer than any the KB knows (torch>=2.15) is about what gpuprep cannot judge:
  // it stays, and the plan says what it does not know instead of claiming nothing runs.
  if (!anchor || compareVersions(anchor, newestKnown(runnable)) > 0)
    return { requirement, specifier, change: null };
  const series = nearestSeries(specifier, pool);
  if (!series) return { requirement, specifier, change: null };
  const line = changedLine(project, requirement, series);
  return {
    requirement,
    specifier: `==${series}.*`,
    change: { requirement, origin: requirement.origin, series, ...line },
  };
}

/** Whether a conflict is the policy's change (shared by both plans, so it does not weigh in auto). */
export function isPinChange(conflict: PinConflict, change: PinChange | null): boolean {
  return (
    change !== null &&
    conflict.requirement === change.requirement &&
    conflict.provided === `${change.series}.*`
  );
}

/** The one conflict a changed pin adds to whichever plan is chosen. */
export function pinChangeConflict(change: PinChange, gpu: string): PinConflict {
  return {
    requirement: change.requirement,
    provided: `${change.series}.*`,
    message: `${change.from} (${change.origin}): no torch build of that release runs on ${gpu}; the nearest that runs is ${change.series}, so the plan uses ${change.to}. Change the line: ${change.origin}: ${change.from}  ->  ${change.to}`,
  };
}
