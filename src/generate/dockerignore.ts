/** .dockerignore: keep environments, caches, data and credentials out of the build context and image. */
import type { Plan } from "../plan/types.js";
import { header } from "./paths.js";

export function renderDockerignore(plan: Plan): string {
  const lines = [
    header(plan, "#").trimEnd(),
    "# Local environments: a host venv in the image would shadow the image's torch.",
    ".venv/",
    "venv/",
    "**/__pycache__/",
    "**/*.pyc",
    ".ipynb_checkpoints/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    "# Mounted at run time, never baked in.",
    "data/",
    "checkpoints/",
    ".cache/",
    "# Secrets, at any depth: `COPY . /workspace` would bake them into a layer of the image.",
    "**/.credentials",
    "**/.env*",
    "**/.aws",
    "**/.ssh",
    "**/*.pem",
    "**/*.key",
    "**/.netrc",
    "**/.pypirc",
    "**/.npmrc",
    "# Version control (nested checkouts too) and gpuprep's own bookkeeping.",
    "**/.git",
    ".gpuprep/",
  ];
  return lines.join("\n") + "\n";
}
