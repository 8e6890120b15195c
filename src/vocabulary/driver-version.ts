/**
 * An NVIDIA Linux driver as a value: "580.95.05", "535.104.12", or a bare branch "580". Parsed once
 * where it enters (nvidia-smi in the facts, --driver, a knowledge-base row), carried as this type
 * through the knowledge-base queries, the plan and the rules, and formatted only for people.
 */
export interface DriverVersion {
  /** The branch: "580.95.05" -> 580 (NVIDIA's R580). */
  readonly branch: number;
  /** "580.95.05" -> 95; null for a bare branch. */
  readonly minor: number | null;
  /** "580.95.05" -> 5; null when not given. */
  readonly patch: number | null;
  /** As written, trimmed: NVIDIA writes the patch with a leading zero ("05"), which the numbers lose. */
  readonly text: string;
}

/** "580", "580.95" or "580.95.05" (surrounding blanks allowed) into a DriverVersion; null when it is not one. */
export function parseDriverVersion(text: string): DriverVersion | null {
  const trimmed = text.trim();
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(trimmed);
  if (!match) return null;
  return {
    branch: Number(match[1]),
    minor: match[2] === undefined ? null : Number(match[2]),
    patch: match[3] === undefined ? null : Number(match[3]),
    text: trimmed,
  };
}

/** The driver as nvidia-smi prints it ("580.95.05"), or the branch as given ("580"). */
export function formatDriverVersion(driver: DriverVersion): string {
  return driver.text;
}

/** Order by branch, minor, patch; a part not given counts as 0 (580 < 580.65.06 = 580.65.06). */
export function compareDriverVersions(a: DriverVersion, b: DriverVersion): number {
  return a.branch - b.branch || (a.minor ?? 0) - (b.minor ?? 0) || (a.patch ?? 0) - (b.patch ?? 0);
}

/**
 * The driver to judge a bare branch by: its newest patch. Users type the branch, and every released
 * 580.x driver is at least 580.65.06 (the CUDA 13.0 GA driver). A full version is itself.
 */
export function newestOfBranch(driver: DriverVersion): DriverVersion {
  return driver.minor === null ? { ...driver, minor: 9999, patch: 9999 } : driver;
}
