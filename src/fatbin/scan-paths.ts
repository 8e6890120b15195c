/**
 * Many files: walk directories for shared libraries, objects and archives, scan them with a few
 * reads in flight at once, and summarise what each covers.
 */
import { opendir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { scanFile, distinctTargets, type FileScan } from "./scan-file.js";
import type { BinariesFacts, BinaryCoverage } from "../facts/schema.js";

/** lib.so, lib.so.12, lib.so.12.1, x.o, x.a, and CPython extensions (x.cpython-312-x86_64-linux-gnu.so). */
export function isBinaryCandidate(name: string): boolean {
  return /\.so(\.\d+)*$/.test(name) || name.endsWith(".o") || name.endsWith(".a");
}

/** Files under `root` (or `root` itself) that may hold CUDA code; symlinked directories followed once. */
export async function findBinaries(roots: string[]): Promise<string[]> {
  const found: string[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  async function walk(dir: string): Promise<void> {
    let real: string;
    try {
      real = await realpath(dir);
    } catch {
      return;
    }
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let handle;
    try {
      handle = await opendir(dir);
    } catch {
      return;
    }
    const subdirs: string[] = [];
    for await (const entry of handle) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) subdirs.push(path);
      else if ((entry.isFile() || entry.isSymbolicLink()) && isBinaryCandidate(entry.name)) {
        // Versioned symlinks (libx.so -> libx.so.12) point at one file: scan it once.
        const target = entry.isSymbolicLink() ? await realpath(path).catch(() => null) : path;
        if (target && !seenFiles.has(target)) {
          const info = entry.isSymbolicLink() ? await stat(target).catch(() => null) : null;
          if (!entry.isSymbolicLink() || info?.isFile()) {
            seenFiles.add(target);
            found.push(path);
          }
        }
      } else if (entry.isSymbolicLink()) {
        const info = await stat(path).catch(() => null);
        if (info?.isDirectory()) subdirs.push(path);
      }
    }
    for (const sub of subdirs) await walk(sub);
  }
  for (const root of roots) {
    const info = await stat(root).catch(() => null);
    if (info?.isDirectory()) await walk(root);
    // A named FIFO or device is listed so its scan reports it unreadable (FileReader refuses it).
    else if (info) found.push(root);
  }
  return found;
}

export interface ScanProgress {
  done: number;
  total: number;
  path: string;
}

/** Scans files with `concurrency` in flight; results in the order of `files`. */
export async function scanFiles(
  files: string[],
  options: { concurrency?: number; onProgress?: (progress: ScanProgress) => void } = {},
): Promise<FileScan[]> {
  const results: FileScan[] = new Array(files.length);
  let next = 0;
  let done = 0;
  async function worker(): Promise<void> {
    while (next < files.length) {
      const index = next++;
      const path = files[index] as string;
      results[index] = await scanFile(path);
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
  const scans = await scanFiles(files);
  const relevant = scans.filter((s) => s.entries.length > 0 || (s.error && s.error.code !== "not-elf"));
  return {
    scanned: true,
    reason: null,
    durationMs: Math.round(performance.now() - started),
    files: relevant.map(coverageOf),
    filesExamined: files.length,
  };
}
