/**
 * What a torch requirement pins, read once for doctor's prediction and init's plan: a local
 * version (`torch==2.7.1+cu128`) or a wheel URL names a build (its variant and exact version) as
 * well as a release; the public part (`==2.7.1`) is what a release series must satisfy.
 */
import type { Requirement } from "../facts/schema.js";
import { parseTorchVariant } from "../vocabulary/torch-variant.js";

interface TorchPin {
  /** The specifier without the local segment: what a release must satisfy ("==2.7.1"). */
  publicSpecifier: string;
  /** The build a local version or wheel URL names: "2.7.1+cu128"; null when none is named. */
  exactVersion: string | null;
  /** Its variant tag ("cu128"); null when the pin names no variant gpuprep can read. */
  variant: string | null;
}

/** "torch-2.7.1%2Bcu128-cp312-...whl" and /whl/cu128/ paths: the build a wheel URL names. */
function wheelUrlBuild(url: string): { version: string; variant: string | null } | null {
  const decoded = decodeURIComponent(url);
  const wheel = /\/torch-([0-9][0-9.]*)(?:\+([a-z0-9.]+))?-[^/]*\.whl$/i.exec(decoded);
  if (!wheel) return null;
  const fromPath = /\/whl\/(?:(?:nightly|test)\/)?([a-z0-9.]+)\//.exec(decoded)?.[1] ?? null;
  const tag = wheel[2] ?? fromPath;
  const variant = tag && parseTorchVariant(tag) ? tag.toLowerCase() : null;
  return { version: `${wheel[1]}${wheel[2] ? `+${wheel[2]}` : ""}`, variant };
}

export function torchPin(requirement: Requirement): TorchPin {
  const specifier = requirement.specifier.replace(/%2B/gi, "+");
  const local = /^===?\s*([0-9][0-9.]*)\+([a-z0-9.]+)$/i.exec(specifier);
  if (local) {
    const tag = local[2]!.toLowerCase();
    return {
      publicSpecifier: `==${local[1]}`,
      exactVersion: `${local[1]}+${local[2]}`,
      variant: parseTorchVariant(tag) ? tag : null,
    };
  }
  const fromUrl = requirement.url ? wheelUrlBuild(requirement.url) : null;
  if (fromUrl)
    return {
      publicSpecifier: `==${fromUrl.version.split("+")[0]}`,
      exactVersion: fromUrl.version,
      variant: fromUrl.variant,
    };
  return { publicSpecifier: specifier, exactVersion: null, variant: null };
}
