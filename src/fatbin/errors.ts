/** A file the scanner could not read as claimed: reported for that file, the scan goes on. */
/** "internal" marks an exception the reader did not anticipate: a bug (the fuzzer fails on it). */
/** "time-limit": the scan's time ran out before or while this file was read (scan-paths.ts). */
export type ScanErrorCode =
  "unreadable" | "not-elf" | "unsupported" | "truncated" | "corrupt" | "internal" | "time-limit";

export class ScanError extends Error {
  constructor(
    readonly code: ScanErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ScanError";
  }
}
