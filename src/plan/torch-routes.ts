/**
 * Where the project already sends torch: a [tool.uv.sources] entry naming a [[tool.uv.index]], or a
 * requirements file's --index-url / --extra-index-url. A route to a PyTorch index variant
 * (https://download.pytorch.org/whl/cu118) is a pin on the CUDA build, kept when that variant runs.
 * A conda `pytorch-cuda=12.1` (the pytorch channel's CUDA build selector) is the same pin, read as
 * a route to cu121 since the plan installs torch from the PyPI side.
 */
import type { ProjectFacts } from "../facts/schema.js";
import { defaultFeatures, pytorchCudaVariant } from "./conda-requirements.js";

export const TORCH_FAMILY = ["torch", "torchvision", "torchaudio"] as const;

export interface TorchRoute {
  /** torch, torchvision or torchaudio. */
  package: string;
  /** The index URL the route resolves to; null when the entry is not an index (a path, a git URL). */
  indexUrl: string | null;
  /** The [[tool.uv.index]] name, for pyproject routes. */
  indexName: string | null;
  /** The PyTorch variant the URL names ("cu118", "cpu"); null for any other index. */
  variant: string | null;
  /** "pyproject.toml [tool.uv.sources]", "requirements.txt --index-url". */
  origin: string;
}

/** "https://download.pytorch.org/whl/cu118/" -> "cu118"; null for other URLs. */
export function pytorchVariantOf(url: string): string | null {
  const match = /^https?:\/\/download\.pytorch\.org\/whl\/(?:(?:nightly|test)\/)?(cu\d{3}|cpu)\/?$/.exec(
    url.trim(),
  );
  return match ? (match[1] as string) : null;
}

function sourceEntries(value: unknown): Array<Record<string, unknown>> {
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null);
}

export function torchRoutes(project: ProjectFacts): TorchRoute[] {
  const routes: TorchRoute[] = [];
  const uv = project.pyproject?.uv;
  if (uv) {
    for (const name of TORCH_FAMILY) {
      for (const entry of sourceEntries(uv.sources[name])) {
        const indexName = typeof entry["index"] === "string" ? entry["index"] : null;
        const indexUrl = indexName ? (uv.indexes.find((i) => i.name === indexName)?.url ?? null) : null;
        routes.push({
          package: name,
          indexUrl,
          indexName,
          variant: indexUrl ? pytorchVariantOf(indexUrl) : null,
          origin: "pyproject.toml [tool.uv.sources]",
        });
      }
    }
  }
  for (const file of project.requirementsFiles) {
    if (!file.requirements.some((r) => (TORCH_FAMILY as readonly string[]).includes(r.normalizedName)))
      continue;
    const urls = [
      ...file.indexUrls.map((url) => ({ url, flag: "--index-url" })),
      ...file.extraIndexUrls.map((url) => ({ url, flag: "--extra-index-url" })),
    ];
    for (const { url, flag } of urls) {
      const variant = pytorchVariantOf(url);
      if (!variant) continue; // a mirror of PyPI is not a torch route
      routes.push({
        package: "torch",
        indexUrl: url,
        indexName: null,
        variant,
        origin: `${file.path.split("/").pop() ?? file.path} ${flag}`,
      });
    }
  }
  for (const manifest of project.condaManifests ?? []) {
    const features = defaultFeatures(manifest);
    for (const dep of manifest.dependencies) {
      if (dep.name !== "pytorch-cuda" || !features.has(dep.feature) || dep.platform !== null) continue;
      const variant = pytorchCudaVariant(dep.version);
      if (!variant) continue;
      routes.push({
        package: "torch",
        indexUrl: `https://download.pytorch.org/whl/${variant}`,
        indexName: null,
        variant,
        origin: `${dep.origin} ${dep.raw}`,
      });
    }
  }
  return routes;
}

/** The one PyTorch variant the project's routes ask for, or null (none, or they disagree). */
export function routedVariant(routes: TorchRoute[]): string | null {
  const variants = new Set(routes.filter((r) => r.package === "torch").map((r) => r.variant));
  if (variants.size !== 1) return null;
  return [...variants][0] ?? null;
}
