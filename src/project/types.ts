/**
 * The values the project model hands its consumers: what each install command would put in place of
 * torch (doctor's rules) and the manifest lines that decide it. Types only, so the readers
 * (predict-wheel, predict-conda, routes) and their entry point import it without a circle.
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { MarkerEnvironment } from "../util/pep508-marker.js";

/** A manifest line that decides the outcome: where it is and what it says. */
export interface ManifestLine {
  /** "pyproject.toml:30", "requirements.txt:6", "pixi.toml:17", or "requirements.txt" when no line is known. */
  origin: string;
  text: string;
}

export interface PredictedBuild {
  /** "torch 2.6 cu124 wheel (linux-x86_64)", "conda-forge pytorch 2.5.1 CUDA 12.6 (linux-aarch64)" */
  label: string;
  /** Release series, "2.6". */
  torch: string;
  /** null: a CPU-only build. */
  cuda: string | null;
  /** As get_arch_list() prints it; SASS only where the build's PTX is unverified. */
  archList: string[];
  sources: string[];
}

export interface InstallPrediction {
  /** The command a user runs: "uv sync", "pip install -r requirements.txt", "pixi install -e gpu". */
  command: string;
  tool: "uv" | "pip" | "pixi" | "conda";
  /** The manifest file, as a path relative to the project where it is inside it. */
  manifest: string;
  /** The requirement or spec torch comes from, and the routes (index, channel, CUDA pin) that pick its build. */
  lines: ManifestLine[];
  /** One line: how the build was worked out. */
  how: string;
  /** The build(s) it gets; several when a conda solver picks among CUDA variants. Empty when not known. */
  builds: PredictedBuild[];
  /** Why the build cannot be named; null when `builds` is set. */
  unknown: string | null;
  /** The torch requirement as written: a PEP 440 specifier for wheels ("==2.5.1", ">=2.5"), a conda spec for conda. */
  specifier: string;
  /** Wheels: the exact version uv.lock holds, or the local version a pin or URL names ("2.5.1+cu124"). */
  exactVersion: string | null;
  /** Wheels: the variant ("cu124", "cpu") installed; null for conda. */
  variant: string | null;
  /** Wheels: no index, pin or URL names the build, so it is PyPI's own. */
  fromPypi: boolean;
  /** The install replaces an installed torch even when its version satisfies the pin (uv sync; a pinned local version or URL). */
  exact: boolean;
  ecosystem: "pypi" | "conda";
  /** conda: the channel that serves torch. */
  channel: string | null;
  /** pixi / conda: the conda dependency line of torch, for fixes. */
  condaTorchLine: ManifestLine | null;
  /** pixi: the [system-requirements] cuda in force ("12.0"), and its line. */
  systemCuda: { value: string; origin: string } | null;
}

export type Platform = "linux-x86_64" | "linux-aarch64";

export interface PredictionContext {
  facts: Facts;
  kb: KnowledgeBase;
  platform: Platform;
  markers: MarkerEnvironment;
  projectDir: string;
}
