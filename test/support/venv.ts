/** Throwaway directories and venvs for tests that run the probe against real interpreters. */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's python3 (where .ci/run installs python3-torch). */
export const DEBIAN_PYTHON = "/usr/bin/python3";

export function tempDir(prefix = "gpuprep-probe-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A venv without pip (fast, no network) from Debian's python3; returns [python, site-packages]. */
export function makeVenv(prefix?: string): [string, string] {
  const dir = tempDir(prefix);
  try {
    execFileSync(DEBIAN_PYTHON, ["-m", "venv", "--without-pip", dir], { stdio: "pipe" });
  } catch (error) {
    throw new Error(`python3 -m venv failed (apt-get install python3 python3-venv): ${String(error)}`);
  }
  const version = execFileSync(DEBIAN_PYTHON, ["-c", "import sys;print('%d.%d'%sys.version_info[:2])"], {
    encoding: "utf8",
  }).trim();
  return [join(dir, "bin", "python"), join(dir, "lib", `python${version}`, "site-packages")];
}
