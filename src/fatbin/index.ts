/** The CUDA fatbin reader: what GPU code a binary carries, read from headers only. */
export { scanBuffer, distinctTargets, type FileScan } from "./scan-file.js";
export { findBinaries, scanFiles, scanEnvironmentBinaries, coverageOf } from "./scan-paths.js";
