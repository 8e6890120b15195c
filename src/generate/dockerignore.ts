/**
 * .dockerignore as an allowlist: the build context holds only what the Dockerfile reads (the
 * constraints, the requirements, an offline wheelhouse), never the project. A denylist of secrets
 * cannot be complete (kaggle.json, service-account.json, a stray id_rsa ...: issue 28), and the
 * image needs none of the project: compose, the run script and the devcontainer bind-mount it at
 * /workspace when the container runs.
 */
import type { Plan } from "../plan/types.js";
import { CONSTRAINTS_FILE, REQUIREMENTS_FILE, header } from "./paths.js";
import { singleLine } from "../util/single-line.js";

/** Secrets left out even inside an allowed directory (a wheelhouse that holds a .netrc). */
const SECRETS_EVEN_WHEN_ALLOWED = [
  "**/.env*",
  "**/.netrc",
  "**/.pypirc",
  "**/.ssh",
  "**/*.pem",
  "**/*.key",
  "**/.git",
];

/** A path as a literal .dockerignore pattern: Go filepath.Match's special characters escaped. */
function literalPattern(path: string): string {
  return singleLine(path)
    .replace(/^\.\/+/, "")
    .replace(/\/+$/, "")
    .replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/** What the Dockerfile's COPY and bind mounts read from the context. */
function buildContextFiles(plan: Plan): string[] {
  const files = [CONSTRAINTS_FILE, REQUIREMENTS_FILE];
  if (plan.options.wheelhouse) files.push(literalPattern(plan.options.wheelhouse));
  return files;
}

export function renderDockerignore(plan: Plan): string {
  const lines = [
    header(plan, "#").trimEnd(),
    "# An allowlist: nothing of the project reaches the build context except what the Dockerfile",
    "# reads. The project is bind-mounted at /workspace when the container runs (compose.yaml,",
    "# run-container.sh, devcontainer.json), so no source, environment (.venv, .pixi) or secret is",
    "# ever baked into a layer. Add a `!path` line below for a file a RUN step of yours needs.",
    "*",
    ...buildContextFiles(plan).map((file) => `!${file}`),
    "# Secrets stay out even inside an allowed directory.",
    ...SECRETS_EVEN_WHEN_ALLOWED,
  ];
  return lines.join("\n") + "\n";
}
