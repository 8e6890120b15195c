/**
 * Every route the project gives a torch-family package, as init's plan weighs them: a route to a
 * PyTorch index variant (https://download.pytorch.org/whl/cu118) is a pin on the CUDA build, kept
 * when that variant runs. Read by routes.ts, the same reader doctor's install prediction uses.
 */
import { basename } from "node:path";
import type { ProjectFacts } from "../facts/schema.js";
import type { MarkerEnvironment } from "../util/pep508-marker.js";
import { torchIndexFromUrl } from "../vocabulary/torch-variant.js";
import { defaultFeatures } from "./conda-requirements.js";
import {
  pytorchCudaIndexUrl,
  requirementsRoute,
  TORCH_FAMILY,
  uvRoute,
  type PackageRoute,
} from "./routes.js";

export { type PackageRoute } from "./routes.js";

function condaCudaRoutes(project: ProjectFacts): PackageRoute[] {
  const routes: PackageRoute[] = [];
  for (const manifest of project.condaManifests ?? []) {
    const features = defaultFeatures(manifest);
    for (const dep of manifest.dependencies) {
      if (dep.name !== "pytorch-cuda" || !features.has(dep.feature) || dep.platform !== null) continue;
      const indexUrl = pytorchCudaIndexUrl(dep.version);
      if (!indexUrl) continue;
      routes.push({
        package: "torch",
        indexUrl,
        torchIndex: torchIndexFromUrl(indexUrl),
        indexName: null,
        url: null,
        origin: `${dep.origin} ${dep.raw}`,
        lines: [{ origin: dep.origin, text: dep.raw }],
        how: `${dep.raw} selects the pytorch channel's CUDA build`,
        unknown: null,
      });
    }
  }
  return routes;
}

/**
 * The routes of the torch-family packages the project requires (`required`, normalized names),
 * across its manifests.
 */
export function torchRoutes(
  project: ProjectFacts,
  markers: MarkerEnvironment,
  required: Set<string>,
): PackageRoute[] {
  const routes: PackageRoute[] = [];
  for (const name of TORCH_FAMILY.filter((n) => required.has(n))) {
    const route = uvRoute(project, name, markers);
    if (route) routes.push(route);
  }
  for (const file of project.requirementsFiles) {
    if (!file.requirements.some((r) => (TORCH_FAMILY as readonly string[]).includes(r.normalizedName)))
      continue;
    const route = requirementsRoute(file, "torch", basename(file.path));
    // A mirror of PyPI is not a torch route: only a PyTorch index pins a build.
    if (route?.torchIndex) routes.push(route);
  }
  routes.push(...condaCudaRoutes(project));
  return routes;
}

/** The one PyTorch variant tag the project's torch routes ask for, or null (none, or they disagree). */
export function routedVariant(routes: PackageRoute[]): string | null {
  const variants = new Set(
    routes.filter((r) => r.package === "torch").map((r) => r.torchIndex?.variant.tag ?? null),
  );
  if (variants.size !== 1) return null;
  return [...variants][0] ?? null;
}
