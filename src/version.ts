/**
 * gpuprep's own version and repository, read from package.json so there is one place to bump
 * them (the installed package carries its package.json, so this works after a global install).
 */
import { readFileSync } from "node:fs";

interface Manifest {
  version: string;
  repository?: string | { url?: string };
  homepage?: string;
}

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as Manifest;

export const TOOL_VERSION: string = manifest.version;

/**
 * The repository as a web address: npm's `repository.url` is a git URL
 * ("git+https://github.com/o/r.git"), and links need "https://github.com/o/r".
 */
export const REPOSITORY_URL: string = (
  typeof manifest.repository === "string" ? manifest.repository : (manifest.repository?.url ?? "")
)
  .replace(/^git\+/, "")
  .replace(/\.git$/, "");

export const HOMEPAGE_URL: string = manifest.homepage ?? REPOSITORY_URL;
