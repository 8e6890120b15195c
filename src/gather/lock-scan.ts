/**
 * The wheels the project's locks pin, read before they are installed (issue 25 item 2): for each
 * lock (uv.lock, pylock.toml, a requirements file with --hash values or wheel URLs) the wheel an
 * installer takes for this machine's CPU, Python and glibc, its shared libraries' SASS and PTX
 * targets (src/remote/lock-scan.ts does the reading). Without `fetch` only wheels already on disk
 * (a path or file: URL in the lock, a --find-links directory) are read: nothing is downloaded.
 * Facts only: the verdicts for a GPU are the rules' (locked-wheel-arch-missing).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { coverageOf } from "../fatbin/scan-paths.js";
import type { Facts, LockScanFacts, LockedPackageScan, ProjectFacts } from "../facts/schema.js";
import { errorMessage } from "../errors.js";
import { DEFAULT_HTTP_LIMITS, HttpClient } from "../remote/http.js";
import { readLockFile } from "../remote/locks.js";
import { scanLockClosure, type PackageScan } from "../remote/lock-scan.js";
import type { TargetPlatform } from "../remote/wheel-tags.js";

/**
 * A snapshot without glibc (made before the probe recorded it) is judged against the same newest
 * glibc `gpuprep scan` assumes: a lock rarely holds two manylinux levels of one wheel, and the
 * report says it was assumed.
 */
export const ASSUMED_GLIBC = "2.39";

/** doctor --fetch downloads the locked wheels' libraries: bounded, like scan, but sooner. */
export const LOCK_FETCH_DEADLINE_MS = 15 * 60_000;

export interface LockScanOptions {
  /** Download wheels that are not on disk. */
  fetch: boolean;
  /** For tests and callers with limits of their own; default: scan's limits with a 15 min deadline. */
  client?: HttpClient;
  onProgress?: (done: number, total: number, name: string) => void;
}

export type LockPlatform = TargetPlatform & { glibcAssumed: boolean };

/** The platform a wheel installer matches tags against here; a string says why there is none. */
export function lockPlatformOf(facts: Pick<Facts, "host" | "python">): LockPlatform | string {
  const arch = facts.host.cpuArch;
  if (arch !== "x86_64" && arch !== "aarch64")
    return `wheels are chosen for x86_64 or aarch64 Linux only, not ${arch}`;
  const python = /^(\d+)\.(\d+)/.exec(facts.python.interpreter.version);
  if (!python) return `the Python version "${facts.python.interpreter.version}" is not known`;
  const recorded = facts.host.os.glibc ?? null;
  const glibc = /^(\d+)\.(\d+)/.exec(recorded ?? ASSUMED_GLIBC)!;
  return {
    arch: arch,
    python: `${python[1]}.${python[2]}`,
    glibc: [Number(glibc[1]), Number(glibc[2])],
    glibcAssumed: recorded === null,
  };
}

/** A requirements file is a lock when it pins by hash or names wheel files (pip-compile --generate-hashes). */
function isLockLike(path: string): boolean {
  try {
    const lock = readLockFile(path);
    return lock.packages.some((p) => p.hashes.length > 0 || p.wheels.length > 0);
  } catch {
    return false;
  }
}

/** The project's locks: uv.lock, pylock.toml / pylock.NAME.toml, and lock-like requirements files. */
export function lockFilesOf(project: ProjectFacts): string[] {
  const locks: string[] = [];
  if (project.uvLock) locks.push(project.uvLock.path);
  let names: string[] = [];
  try {
    names = readdirSync(project.dir);
  } catch {
    // The project's directory was read by gather/project.ts; a snapshot's may be gone.
  }
  for (const name of names.sort())
    if (/^pylock(\.[^.]+)?\.toml$/.test(name)) locks.push(join(project.dir, name));
  for (const file of project.requirementsFiles) if (isLockLike(file.path)) locks.push(file.path);
  return locks;
}

function statusOf(pkg: PackageScan): LockedPackageScan["status"] {
  if (pkg.error) return pkg.unreachable ? "unreachable" : "failed";
  return pkg.scan ? "scanned" : "skipped";
}

function packageFacts(pkg: PackageScan): LockedPackageScan {
  const libraries = (pkg.scan?.libraries ?? [])
    .filter((l) => l.entries.length > 0 || (l.error && l.error.code !== "not-elf"))
    .map((l) => {
      const coverage = coverageOf(l);
      return { member: l.path, sass: coverage.sass, ptx: coverage.ptx, error: coverage.error };
    });
  return {
    name: pkg.name,
    version: pkg.version,
    wheel: pkg.wheel?.filename ?? null,
    location: pkg.wheel?.location ?? null,
    status: statusOf(pkg),
    reason: pkg.error ?? (pkg.skipped || null),
    sizeBytes: pkg.scan?.sizeBytes ?? null,
    bytesFetched: pkg.scan?.bytesFetched ?? 0,
    transfer: pkg.scan?.transfer ?? null,
    libraries,
  };
}

function kindOf(path: string): LockScanFacts["locks"][number]["kind"] {
  if (path.endsWith("uv.lock")) return "uv.lock";
  return /pylock(\.[^./]+)?\.toml$/.test(path) ? "pylock.toml" : "requirements";
}

/**
 * Every lock of the project scanned for the machine of `facts`. Null when the project has no lock,
 * when the machine's platform takes no wheels, or (without fetch) when no locked wheel is on disk:
 * then nothing was read and doctor's report stays as it was.
 */
export async function gatherLockScan(
  facts: Pick<Facts, "host" | "python" | "project">,
  options: LockScanOptions,
): Promise<LockScanFacts | null> {
  const platform = lockPlatformOf(facts);
  if (!facts.project || typeof platform === "string") return null;
  return scanProjectLocks(facts.project, platform, options);
}

/** The project's locks scanned for a platform (init names it from its plan: the target's CPU, the plan's Python). */
export async function scanProjectLocks(
  project: ProjectFacts,
  platform: LockPlatform,
  options: LockScanOptions,
): Promise<LockScanFacts | null> {
  const paths = lockFilesOf(project);
  if (paths.length === 0) return null;
  const started = performance.now();
  const client = options.fetch
    ? (options.client ?? new HttpClient({ ...DEFAULT_HTTP_LIMITS, deadlineMs: LOCK_FETCH_DEADLINE_MS }))
    : null;
  const locks: LockScanFacts["locks"] = [];
  for (const path of paths) {
    try {
      const scan = await scanLockClosure(path, {
        platform,
        client,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
      locks.push({
        path,
        kind: scan.lock.kind,
        error: null,
        bytesFetched: scan.bytesFetched,
        packages: scan.packages.map(packageFacts),
      });
    } catch (error) {
      locks.push({ path, kind: kindOf(path), error: errorMessage(error), bytesFetched: 0, packages: [] });
    }
  }
  const readSomething = locks.some((l) => l.packages.some((p) => p.status !== "skipped"));
  if (!options.fetch && !readSomething) return null;
  return {
    fetch: options.fetch,
    platform: {
      arch: platform.arch,
      python: platform.python,
      glibc: platform.glibc.join("."),
      glibcAssumed: platform.glibcAssumed,
    },
    durationMs: Math.round(performance.now() - started),
    locks,
  };
}
