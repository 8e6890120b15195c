/**
 * `gpuprep scan`'s core: the binaries on this machine (files, directories, an interpreter's
 * site-packages) and what is not installed (wheels, images, a lock, an index's pick), read and
 * judged for one GPU. The CLI (cli/scan.ts) parses the flags, names the GPU and renders; a library
 * caller (src/index.ts) names what it needs and takes the CLI's defaults for the rest.
 */
import { findBinaries, scanFiles, type FileScan } from "../fatbin/index.js";
import type { HttpClient } from "../remote/http.js";
import { readsRemote, type ScanInput, type ScanTarget } from "../remote/scan-inputs.js";
import {
  libraryReport,
  newResult,
  type LibraryReport,
  type PackageReport,
  type RemoteResult,
  type ScanDevice,
  type ScanFinding,
  type SourceReport,
} from "../remote/scan-result.js";

export interface ScanRequest {
  /** Files and directories on this machine (directories searched recursively). */
  roots: string[];
  /** Everything named on the command line: the wheels and images among them are read here. */
  inputs: ScanInput[];
  /** A lock or requirements file: every wheel it installs on the target. */
  lock: string | null;
  /** --lock: read only wheels on disk, fetch nothing. */
  offline: boolean;
  /** NAME or NAME==VERSION: the wheel an installer picks from `indexes` / `findLinks`. */
  packages: string[];
  indexes: string[];
  findLinks: string[];
  target: ScanTarget;
  /** The GPU judged for: a named one, or the local one once nvidia-smi answers (null: none). */
  device: ScanDevice | null | Promise<ScanDevice | null>;
  /** The paths named on the command line. */
  named: ReadonlySet<string>;
  /** Also list libraries without CUDA code. */
  all: boolean;
  /** The most time and bytes all downloads together may take; null: the HTTP client's defaults. */
  timeoutSeconds: number | null;
  maxBytes: number | null;
}

export interface ScanOutcome {
  device: ScanDevice | null;
  /** The libraries on this machine (by path), then those of wheels and images. */
  libraries: LibraryReport[];
  filesExamined: number;
  packages: PackageReport[];
  sources: SourceReport[];
  findings: ScanFinding[];
  /** Files were examined and not one could be read: nothing was checked (issue 12). */
  nothingReadable: boolean;
}

type Progress = (text: string) => void;

/**
 * What a library caller gives scanPaths: any part of a request. The rest is what `gpuprep scan`
 * takes without flags, but no local GPU (device null: no verdicts) and no download limits of its own.
 */
export type ScanOptions = Partial<ScanRequest>;

/** The machine `gpuprep scan` judges for without flags: this CPU, Python 3.12, glibc 2.39. */
async function defaultTarget(remote: boolean): Promise<ScanTarget> {
  // The KB loads only where a variant label may be judged, as the CLI does.
  const { knownCapabilities } = await import("./device.js");
  return {
    capability: null,
    platform: { arch: process.arch === "arm64" ? "aarch64" : "x86_64", python: "3.12", glibc: [2, 39] },
    driverCuda: null,
    knownCapabilities: remote ? await knownCapabilities() : [],
  };
}

/** The request with every part the caller left out filled in (the CLI gives all of them). */
async function completeRequest(options: ScanOptions): Promise<ScanRequest> {
  const inputs = options.inputs ?? [];
  const lock = options.lock ?? null;
  const packages = options.packages ?? [];
  const roots = options.roots ?? [];
  return {
    roots,
    inputs,
    lock,
    offline: options.offline ?? false,
    packages,
    indexes: options.indexes ?? [],
    findLinks: options.findLinks ?? [],
    target: options.target ?? (await defaultTarget(readsRemote({ inputs, lock, packages }))),
    device: options.device ?? null,
    named: options.named ?? new Set(roots),
    all: options.all ?? false,
    timeoutSeconds: options.timeoutSeconds ?? null,
    maxBytes: options.maxBytes ?? null,
  };
}

/** Reads and judges everything the request names; `onProgress` hears what is being read. */
export async function scanPaths(options: ScanOptions, onProgress: Progress = () => {}): Promise<ScanOutcome> {
  const request = await completeRequest(options);
  // The readers of remote inputs (HTTP, zip, tar) load only when asked for: a plain scan's start-up
  // is measured against cuobjdump (docs/benchmarks.md).
  const reader = readsRemote(request) ? await import("../remote/scan-remote.js") : null;
  // Made first: its deadline covers all downloads together.
  const client = reader?.httpClient(request.timeoutSeconds, request.maxBytes) ?? null;
  const { files, scans } = await scanLocalFiles(request.roots, onProgress);
  const result = newResult();
  if (reader && client) {
    // Judged for the named target; a local GPU is only known once nvidia-smi answers.
    const capability = request.target.capability ?? (await request.device)?.capability ?? null;
    await readRemoteInputs(reader, client, request, { ...request.target, capability }, result, onProgress);
  }
  const device = await request.device;
  const filesExamined = files.length + result.filesExamined;
  const everything = [...scans, ...result.libraries];
  return {
    device,
    libraries: [...localReports(scans, request, device), ...result.libraries],
    filesExamined,
    packages: result.packages,
    sources: result.sources,
    findings: result.findings,
    nothingReadable: filesExamined > 0 && everything.length > 0 && everything.every((s) => s.error !== null),
  };
}

async function scanLocalFiles(
  roots: string[],
  onProgress: Progress,
): Promise<{ files: string[]; scans: FileScan[] }> {
  if (roots.length === 0) return { files: [], scans: [] };
  const files = await findBinaries(roots);
  const scans = await scanFiles(files, {
    onProgress: ({ done, total }) => onProgress(`${done}/${total} files`),
  });
  return { files, scans };
}

/** The libraries on this machine worth a line: with CUDA code or unreadable (every one with --all). */
function localReports(scans: FileScan[], request: ScanRequest, device: ScanDevice | null): LibraryReport[] {
  return (
    scans
      // A text file named .so (a linker script) inside a directory is not an error; one named on
      // the command line is reported.
      .filter(
        (s) =>
          request.all ||
          s.entries.length > 0 ||
          (s.error && (s.error.code !== "not-elf" || request.named.has(s.path))),
      )
      .map((scan) => libraryReport(scan, device?.capability ?? null))
      .sort((a, b) => a.path.localeCompare(b.path))
  );
}

type Reader = typeof import("../remote/scan-remote.js");

/** The wheels and images named, then the lock, then each --package's pick, in that order. */
async function readRemoteInputs(
  reader: Reader,
  client: HttpClient,
  request: ScanRequest,
  target: ScanTarget,
  result: RemoteResult,
  onProgress: Progress,
): Promise<void> {
  for (const input of request.inputs) {
    if (input.kind === "wheel") {
      onProgress(`wheel ${input.location}`);
      await reader.scanWheelInput(result, input.location, target, client);
    } else if (input.kind === "image") {
      await reader.scanImageInput(result, input.ref, target, client, (i, n) =>
        onProgress(`${input.ref}: layer ${i + 1}/${n}`),
      );
    }
  }
  if (request.lock !== null)
    await reader.scanLockInput(
      result,
      request.lock,
      target,
      request.offline ? null : client,
      (done, total, name) => onProgress(`${done}/${total} wheels (${name})`),
    );
  for (const spec of request.packages)
    await reader.scanIndexInput(result, spec, request.indexes, request.findLinks, target, client);
}
