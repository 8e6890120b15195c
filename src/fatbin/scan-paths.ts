/**
 * Many files: walk directories for shared libraries, objects and archives, scan them with a few
 * reads in flight at once, and summarise what each covers.
 */
import { readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import { scanFile, distinctTargets, type FileScan } from "./scan-file.js";
import type { BinariesFacts, BinaryCoverage } from "../facts/schema.js";

/** lib.so, lib.so.12, lib.so.12.1, x.o, x.a, and CPython extensions (x.cpython-312-x86_64-linux-gnu.so). */
export function isBinaryCandidate(name: string): boolean {
  return /\.so(\.\d+)*$/.test(name) || name.endsWith(".o") || name.endsWith(".a");
}

/**
 * Files under `root` (or `root` itself) that may hold CUDA code; symlinked directories followed once.
 * The walk is synchronous on purpose: a site-packages holds thousands of directories, and awaiting
 * opendir/realpath for each one in turn left the process idle on the thread pool (1.4 s of 2.1 s
 * for Debian's dist-packages); the same walk with the sync calls takes milliseconds per thousand
 * directories, and the files themselves are still read with reads in flight (scanFiles).
 */
export async function findBinaries(roots: string[]): Promise<string[]> {
  const found: string[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  const statOrNull = (path: string) => {
    try {
      return statSync(path);
    } catch {
      return null;
    }
  };
  function walk(dir: string): void {
    let real: string;
    let entries: Dirent[];
    try {
      real = realpathSync(dir);
      if (seenDirs.has(real)) return;
      seenDirs.add(real);
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      // A directory that cannot be listed is reported, not skipped: scanning it says why (EACCES),
      // so `scan` of an unreadable directory is an error, not "0 files examined" (issue 28).
      if (!seenFiles.has(dir)) {
        seenFiles.add(dir);
        found.push(dir);
      }
      return;
    }
    const subdirs: string[] = [];
    // Plain concatenation: path.join's normalising showed up in profiles at 15,000 entries.
    const prefix = dir.endsWith("/") ? dir : `${dir}/`;
    for (const entry of entries) {
      const path = prefix + entry.name;
      if (entry.isDirectory()) subdirs.push(path);
      else if ((entry.isFile() || entry.isSymbolicLink()) && isBinaryCandidate(entry.name)) {
        // Versioned symlinks (libx.so -> libx.so.12) point at one file: scan it once.
        let target: string | null = path;
        if (entry.isSymbolicLink()) {
          try {
            target = realpathSync(path);
          } catch {
            target = null;
          }
        }
        if (target && !seenFiles.has(target)) {
          if (!entry.isSymbolicLink() || statOrNull(target)?.isFile()) {
            seenFiles.add(target);
            found.push(path);
          }
        }
      } else if (entry.isSymbolicLink()) {
        if (statOrNull(path)?.isDirectory()) subdirs.push(path);
      }
    }
    for (const sub of subdirs) walk(sub);
  }
  for (const root of roots) {
    const info = statOrNull(root);
    if (info?.isDirectory()) walk(root);
    // A named FIFO or device is listed so its scan reports it unreadable (FileReader refuses it).
    else if (info) found.push(root);
  }
  return found;
}

interface ScanProgress {
  done: number;
  total: number;
  path: string;
}

/** `scan`'s own limit; doctor's scan of an environment gets less (scanEnvironmentBinaries). */
const SCAN_TIME_LIMIT_MS = 600_000;
const ENVIRONMENT_SCAN_TIME_LIMIT_MS = 60_000;

/**
 * Scans files with `concurrency` in flight; results in the order of `files`. After `timeLimitMs`
 * every read stops: the file being read and every one not started get a "time-limit" error.
 */
export async function scanFiles(
  files: string[],
  options: { concurrency?: number; onProgress?: (progress: ScanProgress) => void; timeLimitMs?: number } = {},
): Promise<FileScan[]> {
  const limitMs = options.timeLimitMs ?? SCAN_TIME_LIMIT_MS;
  const deadline = Date.now() + limitMs;
  const results = new Array<FileScan>(files.length);
  let next = 0;
  let done = 0;
  async function worker(): Promise<void> {
    while (next < files.length) {
      const index = next++;
      const path = files[index] as string;
      results[index] =
        Date.now() >= deadline
          ? {
              path,
              sizeBytes: 0,
              entries: [],
              error: {
                code: "time-limit",
                message: `not read: the scan's time limit of ${limitMs / 1000} s ran out`,
              },
            }
          : await scanFile(path, deadline);
      done++;
      options.onProgress?.({ done, total: files.length, path });
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 16, files.length) }, worker));
  return results;
}

export function coverageOf(scan: FileScan): BinaryCoverage {
  return {
    path: scan.path,
    distribution: null,
    sizeBytes: scan.sizeBytes,
    sass: distinctTargets(scan.entries, "sass"),
    ptx: distinctTargets(scan.entries, "ptx"),
    entryCount: scan.entries.length,
    error: scan.error ? `${scan.error.code}: ${scan.error.message}` : null,
  };
}

/**
 * The CUDA coverage of every binary under these directories (an environment's sys.path), as the
 * Facts snapshot records it: only files with CUDA code, or that failed to read as what their name
 * says. Text files named .so (linker scripts) are not errors here.
 */
export async function scanEnvironmentBinaries(dirs: string[]): Promise<BinariesFacts> {
  const started = performance.now();
  const files = await findBinaries(dirs);
  const scans = await scanFiles(files, { timeLimitMs: ENVIRONMENT_SCAN_TIME_LIMIT_MS });
  const relevant = scans.filter((s) => s.entries.length > 0 || (s.error && s.error.code !== "not-elf"));
  return {
    scanned: true,
    reason: null,
    durationMs: Math.round(performance.now() - started),
    files: relevant.map(coverageOf),
    filesExamined: files.length,
  };
}
