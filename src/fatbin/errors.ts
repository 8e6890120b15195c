/** A file the scanner could not read as claimed: reported for that file, the scan goes on. */
/** "internal" marks an exception the reader did not anticipate: a bug (the fuzzer fails on it). */
export type ScanErrorCode = "unreadable" | "not-elf" | "unsupported" | "truncated" | "corrupt" | "internal";

export class ScanError extends Error {
  constructor(
    readonly code: ScanErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ScanError";
  }
}
