/**
 * A GPU's compute capability as a value: 9.0, 12.1. Parsed once where it enters (a KB row, nvidia-smi
 * or torch in the facts, a --gpu argument), carried as this type through the knowledge-base queries,
 * the plan and the rules, and formatted only for people, file contents and KB row keys ("9.0").
 */
export interface ComputeCapability {
  major: number;
  minor: number;
}

/** "9.0", "12.1", "sm_121" or "compute_90a" into a ComputeCapability; null when it is not one. */
export function parseComputeCapability(text: string): ComputeCapability | null {
  const trimmed = text.trim().toLowerCase();
  const dotted = /^(\d{1,2})\.(\d)$/.exec(trimmed);
  if (dotted) return { major: Number(dotted[1]), minor: Number(dotted[2]) };
  const sm = /^(?:sm_|compute_)?(\d{2,3})[af]?$/.exec(trimmed);
  if (sm) {
    const digits = sm[1] as string;
    return { major: Number(digits.slice(0, -1)), minor: Number(digits.slice(-1)) };
  }
  return null;
}

/** "12.1": for messages, and the key the knowledge base's rows are written under. */
export function formatComputeCapability(cc: ComputeCapability): string {
  return `${cc.major}.${cc.minor}`;
}

/** The sm_ name of a capability: 9.0 -> sm_90, 12.1 -> sm_121. */
export function smName(cc: ComputeCapability, suffix: "" | "a" | "f" = ""): string {
  return `sm_${cc.major}${cc.minor}${suffix}`;
}

/** The digits nvcc and arch lists use: 9.0 -> "90", 12.1 -> "121". */
export function smDigits(cc: ComputeCapability): string {
  return `${cc.major}${cc.minor}`;
}

/** Order by major, then minor: 9.0 < 10.0 < 12.1. */
export function compareCapability(a: ComputeCapability, b: ComputeCapability): number {
  return a.major - b.major || a.minor - b.minor;
}
