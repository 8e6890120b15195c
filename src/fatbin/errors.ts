/** A file the scanner could not read as claimed: reported for that file, the scan goes on. */
export type ScanErrorCode = "unreadable" | "not-elf" | "unsupported" | "truncated" | "corrupt";

export class ScanError extends Error {
  constructor(
    readonly code: ScanErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ScanError";
  }
}
