/**
 * Absolute, versioned links to gpuprep's own documentation. Findings used to carry repo-relative
 * paths ("docs/rules/<id>.md") that point nowhere after `npm install -g`; a link to the file at
 * this release's tag (vX.Y.Z) stays right for the installed version even after the docs move on.
 */
import { REPOSITORY_URL, TOOL_VERSION } from "./version.js";

/** `pathInRepo` as in the repository ("docs/rules/torch-not-installed.md", "docs/fleet.md#anchor"). */
export function docsUrl(pathInRepo: string): string {
  return `${REPOSITORY_URL}/blob/v${TOOL_VERSION}/${pathInRepo.replace(/^\/+/, "")}`;
}
