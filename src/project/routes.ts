/**
 * Where a project sends a torch-family package (torch, torchvision, torchaudio), read once for
 * doctor's install prediction and init's plan alike (issue 23: the two used to disagree on index
 * URL forms, uv routes and markers):
 * - uv: a [tool.uv.sources] entry whose marker applies (an index by name, a URL, a path or git
 *   source), else the first non-explicit [[tool.uv.index]], which uv searches before PyPI
 *   (uv's default "first-index" strategy, docs/configuration/indexes.md);
 * - requirements files: --index-url replaces PyPI; else a PyTorch --extra-index-url wins for torch,
 *   since its local versions (2.5.1+cu124) sort above PyPI's 2.5.1;
 * - pixi / environment.yml PyPI dependencies: the package's own index, the manifest's index, or a
 *   PyTorch extra index;
 * - conda `pytorch-cuda=12.1` (the pytorch channel's CUDA selector), read as a route to cu121.
 */
import { basename, relative } from "node:path";
import type { CondaManifest, CondaPypiDependency, ProjectFacts } from "../facts/schema.js";
import { evaluateMarker, type MarkerEnvironment } from "../util/pep508-marker.js";
import { parseTorchVariant, torchIndexFromUrl, type TorchIndex } from "../vocabulary/torch-variant.js";
import type { ManifestLine } from "./types.js";

export const TORCH_FAMILY = ["torch", "torchvision", "torchaudio"] as const;

export interface PackageRoute {
  /** torch, torchvision or torchaudio. */
  package: string;
  /** The index the package is looked up in; null for a URL, path or git source. */
  indexUrl: string | null;
  /** That index as a PyTorch index (variant and channel); null for any other index. */
  torchIndex: TorchIndex | null;
  /** The [[tool.uv.index]] name, for uv routes. */
  indexName: string | null;
  /** A direct URL the source names (uv `url = ...`). */
  url: string | null;
  /** "pyproject.toml [tool.uv.sources]", "requirements.txt --index-url" */
  origin: string;
  /** The manifest lines that decide the route. */
  lines: ManifestLine[];
  /** One line: how the route was worked out. */
  how: string;
  /** Why the build it gives cannot be judged (an undefined index name, a path or git source). */
  unknown: string | null;
}

/** A path as the user sees it: relative to the project where it is inside it. */
export function shortPath(projectDir: string, path: string): string {
  const rel = relative(projectDir, path);
  return rel && !rel.startsWith("..") ? rel : basename(path);
}

/** A pyproject key's line ("pyproject.toml:30"), or the file and key where the line is not known. */
export function pyprojectLine(project: ProjectFacts, key: string, text: string): ManifestLine {
  const pyproject = project.pyproject;
  const line = pyproject?.lines?.[key];
  const file = pyproject ? shortPath(project.dir, pyproject.path) : "pyproject.toml";
  return { origin: line !== undefined ? `${file}:${line}` : `${file}:${key.split("[]")[0]}`, text };
}

function indexRoute(
  name: string,
  indexUrl: string,
  origin: string,
  how: string,
  lines: ManifestLine[],
): PackageRoute {
  const torchIndex = torchIndexFromUrl(indexUrl);
  return {
    package: name,
    indexUrl,
    torchIndex,
    indexName: null,
    url: null,
    origin,
    lines,
    how,
    unknown: torchIndex ? null : `${name} comes from ${indexUrl}, an index gpuprep cannot judge`,
  };
}

function sourceEntries(value: unknown): Array<Record<string, unknown>> {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null);
}

/** A uv project's route for one package; null when uv takes it from PyPI. */
export function uvRoute(
  project: ProjectFacts,
  name: string,
  markers: MarkerEnvironment,
): PackageRoute | null {
  const uv = project.pyproject?.uv;
  if (!uv) return null;
  const raw = uv.sources[name];
  const entry = sourceEntries(raw).find(
    (e) => typeof e["marker"] !== "string" || evaluateMarker(e["marker"], markers) !== false,
  );
  const origin = "pyproject.toml [tool.uv.sources]";
  const sourceLine = pyprojectLine(project, `tool.uv.sources.${name}`, `${name} = ${JSON.stringify(raw)}`);
  const namedIndex = (i: number, why: string, lines: ManifestLine[]): PackageRoute => {
    const index = uv.indexes[i]!;
    const urlLine = pyprojectLine(project, `tool.uv.index[${i}].url`, `url = "${index.url}"`);
    const route = indexRoute(name, index.url, origin, `${why}: ${index.url}`, [...lines, urlLine]);
    return { ...route, indexName: index.name };
  };
  if (entry) {
    if (typeof entry["index"] === "string") {
      const i = uv.indexes.findIndex((index) => index.name === entry["index"]);
      if (i >= 0)
        return namedIndex(i, `[tool.uv.sources] sends ${name} to the index "${entry["index"]}"`, [
          sourceLine,
        ]);
      return {
        ...emptyRoute(name, origin, [sourceLine]),
        indexName: entry["index"],
        unknown: `[tool.uv.sources] names an index "${entry["index"]}" that [[tool.uv.index]] does not define`,
      };
    }
    if (typeof entry["url"] === "string")
      return {
        ...emptyRoute(name, origin, [sourceLine]),
        url: entry["url"],
        how: `${name} comes from ${entry["url"]}`,
      };
    return {
      ...emptyRoute(name, origin, [sourceLine]),
      unknown: `${name} comes from a local path or a git source; its build is not known`,
    };
  }
  const first = uv.indexes.findIndex((index) => !index.explicit);
  if (first < 0) return null;
  const route = namedIndex(first, `uv looks for ${name} in the first [[tool.uv.index]] before PyPI`, []);
  return { ...route, origin: "pyproject.toml [[tool.uv.index]]" };
}

function emptyRoute(name: string, origin: string, lines: ManifestLine[]): PackageRoute {
  return {
    package: name,
    indexUrl: null,
    torchIndex: null,
    indexName: null,
    url: null,
    origin,
    lines,
    how: "",
    unknown: null,
  };
}

/** A requirements file's route: --index-url, else a PyTorch --extra-index-url; null for PyPI. */
export function requirementsRoute(
  file: ProjectFacts["requirementsFiles"][number],
  name: string,
  label: string,
): PackageRoute | null {
  const pytorchExtra = file.extraIndexUrls.find((url) => torchIndexFromUrl(url) !== null);
  const [indexUrl, flag] = file.indexUrls[0]
    ? [file.indexUrls[0], "--index-url"]
    : pytorchExtra
      ? [pytorchExtra, "--extra-index-url"]
      : [null, ""];
  if (!indexUrl) return null;
  return indexRoute(name, indexUrl, `${label} ${flag}`, `${name} comes from ${indexUrl}`, [
    { origin: label, text: `${flag} ${indexUrl}` },
  ]);
}

/** A pixi [pypi-dependencies] / environment.yml pip: entry's route; null for PyPI. */
export function condaPypiRoute(
  manifest: CondaManifest,
  dep: CondaPypiDependency,
  label: string,
): PackageRoute | null {
  const indexUrl =
    dep.index ??
    manifest.pypiIndexUrl ??
    manifest.pypiExtraIndexUrls.find((u) => torchIndexFromUrl(u) !== null) ??
    null;
  if (!indexUrl) return null;
  const lines = dep.index ? [] : [{ origin: label, text: `index ${indexUrl}` }];
  return indexRoute(
    dep.normalizedName,
    indexUrl,
    `${label} index`,
    `${dep.normalizedName} comes from ${indexUrl}`,
    lines,
  );
}

/** The PyTorch index variant a `pytorch-cuda` spec names ("12.1.*", "==12.1" -> cu121); null for a range. */
export function pytorchCudaIndexUrl(version: string): string | null {
  const match = /^(?:==)?(\d+)\.(\d)(?:\.\*)?$/.exec(version.trim());
  if (!match) return null;
  const variant = parseTorchVariant(`cu${match[1]}${match[2]}`);
  return variant ? `https://download.pytorch.org/whl/${variant.tag}` : null;
}
