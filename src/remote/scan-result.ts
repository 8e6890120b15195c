/**
 * What `gpuprep scan` reports: each library's targets and verdict, the wheels and images read, the
 * findings about them. Filled by the core (scan.ts) and the remote readers (scan-remote.ts),
 * rendered by report/scan-text.ts and --json.
 */
import { coverageOf, distinctTargets, type FileScan } from "../fatbin/index.js";
import { coverageFor, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";

/** The GPU judged for: named on the command line or the local one. */
export interface ScanDevice {
  label: string;
  capability: ComputeCapability;
}

export interface LibraryReport {
  path: string;
  sizeBytes: number;
  sass: string[];
  ptx: string[];
  /** LTO-IR (device-link-time code): linked into a program at build time, never loaded as is. */
  lto: string[];
  entryCount: number;
  error: string | null;
  verdict: CoverageVerdict | null;
  /** The wheel (file name) or image (reference) it was read from; absent for a file on disk. */
  package?: string;
  /** In an image: the layer it comes from (0 = the base). */
  layer?: number;
}

/** A wheel scanned (from a path, a URL, an index or a lock), or a lock entry that was not. */
export interface PackageReport {
  name: string;
  version: string | null;
  filename: string | null;
  location: string | null;
  sizeBytes: number | null;
  /** Body bytes fetched over the network for it. */
  bytesFetched: number;
  transfer: "file" | "ranges" | "stream" | null;
  librariesWithCuda: number;
  /** The worst verdict over its libraries with CUDA code. */
  verdict: CoverageVerdict["how"] | null;
  /** PEP 825: its variant label and properties, and whether the target is compatible with them. */
  variant: {
    label: string;
    properties: Record<string, Record<string, string[]>>;
    compatible: boolean | null;
    assumption: string | null;
  } | null;
  /** Why it was not scanned (pure Python, no wheel for the platform, a marker, offline). */
  skipped: string | null;
  error: string | null;
  note?: string;
}

/** What was read: a wheel, a lock, an index, an image; bytes fetched against the size. */
export interface SourceReport {
  ref: string;
  kind: "wheel" | "lock" | "index" | "image";
  transfer: "file" | "ranges" | "stream" | "registry" | null;
  sizeBytes: number | null;
  bytesFetched: number;
  layers?: number;
  /** Image libraries a later layer removed (whiteouts). */
  removed?: string[];
}

export interface ScanFinding {
  severity: "error" | "warning";
  /** The wheel or image it is about. */
  package: string;
  message: string;
}

/** What the remote readers add to the report. */
export interface RemoteResult {
  libraries: LibraryReport[];
  packages: PackageReport[];
  sources: SourceReport[];
  findings: ScanFinding[];
  filesExamined: number;
}

export function newResult(): RemoteResult {
  return { libraries: [], packages: [], sources: [], findings: [], filesExamined: 0 };
}

/** A scanned library's targets and, where the GPU is known and it has loadable code, its verdict. */
export function libraryReport(
  scan: FileScan,
  capability: ComputeCapability | null,
  pkg?: string,
  layer?: number,
): LibraryReport {
  const coverage = coverageOf(scan);
  const loadable = [...coverage.sass, ...coverage.ptx];
  return {
    ...coverage,
    lto: distinctTargets(scan.entries, "lto-ir"),
    verdict: capability && loadable.length > 0 ? coverageFor(loadable, capability) : null,
    ...(pkg !== undefined ? { package: pkg } : {}),
    ...(layer !== undefined ? { layer } : {}),
  };
}
