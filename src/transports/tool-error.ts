/**
 * The error docker or ssh printed itself, as opposed to what the Python they ran printed. Both put
 * their own failure first on stderr and then usage boilerplate ("Run 'docker run --help' for more
 * information"), so the first meaningful line is the one worth showing.
 */
import type { RunResult } from "./types.js";

/** Lines that say where to read more, never what went wrong. */
const BOILERPLATE = [
  /^See '[^']*--help'\.?$/,
  /^Run '[^']*--help' for more information\.?$/,
  /^Usage:/,
  /^Warning: Permanently added .* to the list of known hosts\.?$/,
];

export function firstMeaningfulLine(text: string): string | null {
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line !== "" && !BOILERPLATE.some((pattern) => pattern.test(line))) return line;
  }
  return null;
}

/** Messages only the docker client or daemon writes; a Python traceback never starts like these. */
const DOCKER_OWN =
  /^(docker: )?(Error response from daemon|Cannot connect to the Docker daemon|Unable to find image|Error: No such (container|image)|permission denied while trying to connect|error during connect|invalid reference format|unknown flag|failed to)/i;

/**
 * `docker run` exits 125 when docker itself failed (daemon down, image not found); `docker exec`
 * exits 1 for the same kind of failure, which a Python can exit with too, so there the message
 * decides.
 */
export function dockerOwnError(result: RunResult, subcommand: "run" | "exec"): string | null {
  if (result.code === 0 || result.code === null) return null;
  const line = firstMeaningfulLine(result.stderr);
  if (!line) return null;
  if ((subcommand === "run" && result.code === 125) || DOCKER_OWN.test(line)) return line;
  return null;
}

/** ssh exits 255 for its own errors (resolution, connection, authentication); the remote command's status otherwise. */
export function sshOwnError(result: RunResult): string | null {
  if (result.code !== 255) return null;
  return firstMeaningfulLine(result.stderr);
}
