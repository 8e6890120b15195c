/**
 * A CUDA release as a value: "12.8", "12.8.1", "13.0.2". Parsed once where it enters (a KB row, a
 * wheel's variant, nvidia-smi), carried as this type, formatted only for people and index names.
 */
export interface CudaVersion {
  readonly major: number;
  readonly minor: number;
  /** The update release ("12.8.1" -> 1); null when not given. */
  readonly patch: number | null;
}

export function parseCudaVersion(text: string): CudaVersion | null {
  const match = /^\s*(\d{1,2})\.(\d{1,2})(?:\.(\d{1,3}))?\s*$/.exec(text);
  if (!match) return null;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: match[3] === undefined ? null : Number(match[3]),
  };
}

/** PyTorch's index/wheel tag for this CUDA: 12.8.1 -> "cu128", 9.2 -> "cu92". */
export function cudaWheelTag(version: CudaVersion): string {
  return `cu${version.major}${version.minor}`;
}
