/** The CUDA fatbin reader: what GPU code a binary carries, read from headers only. */
export { scanFile, scanBuffer, distinctTargets, type FileScan, type ScannedEntry } from "./scan-file.js";
export {
  findBinaries,
  scanFiles,
  scanEnvironmentBinaries,
  coverageOf,
  isBinaryCandidate,
} from "./scan-paths.js";
export type { FatbinEntry, EntryKind } from "./fatbin.js";
export { ScanError, type ScanErrorCode } from "./errors.js";
