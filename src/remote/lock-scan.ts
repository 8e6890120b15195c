/**
 * What a lock (or requirements) file would install on a machine, scanned before it is installed:
 * for each package the wheel an installer picks for the machine's platform and Python (the
 * lock's own wheels, or an index's for a requirements pin), each scanned (src/remote/wheel.ts).
 * Pure-Python wheels ("any" platform) hold no native code and are not fetched.
 */
import { fileURLToPath } from "node:url";
import { evaluateMarker } from "../util/pep508-marker.js";
import { errorMessage } from "../errors.js";
import { FetchError, HttpClient } from "./http.js";
import { readLockFile, type LockFile, type LockedPackage } from "./locks.js";
import { findLinksFiles, pickWheel, projectFiles, type IndexFile } from "./simple-index.js";
import { isPureWheel, parseWheelName, tagIndex, tagRank, type TargetPlatform } from "./wheel-tags.js";
import { scanWheel, type WheelScan } from "./wheel.js";

export interface PackageScan {
  name: string;
  version: string | null;
  origin: string;
  /** The wheel picked for the machine: its file name and where it is. */
  wheel: { filename: string; location: string; sha256: string | null } | null;
  /** Why no wheel is scanned (pure Python, not for this platform, a marker excludes it, not found). */
  skipped: string | null;
  scan: WheelScan | null;
  /** A wheel that could not be fetched or read. */
  error: string | null;
  /** The error is the network's (no answer, refused, an HTTP error status), not the wheel's. */
  unreachable: boolean;
  /** The lock's SHA-256 against the file's, where every byte was seen: true, false, or null (not checked). */
  hashMatches: boolean | null;
}

export interface LockScan {
  lock: Pick<LockFile, "kind" | "path" | "indexUrls" | "findLinks">;
  platform: TargetPlatform;
  packages: PackageScan[];
  /** Body bytes fetched for the whole lock. */
  bytesFetched: number;
}

interface LockScanOptions {
  platform: TargetPlatform;
  /** null: offline; only wheels on disk (file: URLs, --find-links directories) are read. */
  client: HttpClient | null;
  /** Wheels scanned at once. */
  concurrency?: number;
  onProgress?: (done: number, total: number, name: string) => void;
}

function markerEnvironment(platform: TargetPlatform) {
  return {
    platform_machine: platform.arch,
    sys_platform: "linux",
    platform_system: "Linux",
    os_name: "posix",
    python_version: platform.python,
  };
}

/** The lock's wheel for the machine: the best-ranked tag among those it lists. */
function lockedChoice(pkg: LockedPackage, platform: TargetPlatform) {
  const supported = tagIndex(platform);
  let best: { wheel: LockedPackage["wheels"][number]; rank: number } | null = null;
  for (const wheel of pkg.wheels) {
    const name = parseWheelName(wheel.filename);
    const rank = name ? tagRank(name, supported) : null;
    if (rank !== null && (best === null || rank < best.rank)) best = { wheel, rank };
  }
  return best?.wheel ?? null;
}

function unscanned(pkg: LockedPackage, skipped: string, wheel: PackageScan["wheel"] = null): PackageScan {
  return {
    name: pkg.name,
    version: pkg.version,
    origin: pkg.origin,
    wheel,
    skipped,
    scan: null,
    error: null,
    unreachable: false,
    hashMatches: null,
  };
}

/** For a requirements pin: the file an installer would take from the --find-links and indexes, in pip's order. */
async function resolvePin(
  pkg: LockedPackage,
  lock: LockFile,
  options: LockScanOptions,
): Promise<IndexFile | string> {
  const files: IndexFile[] = [];
  for (const links of lock.findLinks) files.push(...(await findLinksFiles(options.client, links)));
  const indexes = lock.indexUrls.length ? lock.indexUrls : ["https://pypi.org/simple"];
  if (options.client)
    for (const index of indexes) files.push(...(await projectFiles(options.client, index, pkg.name)));
  const outcome = pickWheel(files, pkg.name, pkg.specifier ?? "", options.platform);
  if (!outcome.picked)
    return options.client
      ? (outcome.reason ?? "no wheel found")
      : `not on disk (${outcome.reason}); the indexes are not asked offline`;
  const sha = outcome.picked.file.hashes["sha256"] ?? null;
  if (pkg.hashes.length > 0 && sha !== null && !pkg.hashes.includes(sha))
    return `the index's ${outcome.picked.file.filename} (sha256 ${sha.slice(0, 12)}...) is none of the file's --hash values`;
  return outcome.picked.file;
}

async function planPackage(
  pkg: LockedPackage,
  lock: LockFile,
  options: LockScanOptions,
): Promise<PackageScan> {
  if (pkg.marker && evaluateMarker(pkg.marker, markerEnvironment(options.platform)) === false)
    return unscanned(pkg, `its markers exclude this machine (${pkg.marker})`);
  let filename: string;
  let location: string;
  let sha256: string | null;
  if (pkg.wheels.length > 0 || lock.kind !== "requirements") {
    const chosen = lockedChoice(pkg, options.platform);
    if (!chosen)
      return unscanned(
        pkg,
        pkg.wheels.length
          ? `no locked wheel for Python ${options.platform.python} on ${options.platform.arch}`
          : "no wheels locked (a source or local package)",
      );
    ({ filename, url: location, sha256 } = chosen);
  } else {
    const resolved = await resolvePin(pkg, lock, options);
    if (typeof resolved === "string") return unscanned(pkg, resolved);
    ({ filename, url: location } = resolved);
    sha256 = resolved.hashes["sha256"] ?? pkg.hashes[0] ?? null;
  }
  const parsed = parseWheelName(filename);
  const wheel = {
    filename,
    location: location.startsWith("file:") ? fileURLToPath(location) : location,
    sha256,
  };
  const version = pkg.version ?? parsed?.version ?? null;
  if (parsed && isPureWheel(parsed))
    return { ...unscanned(pkg, "pure Python (an 'any' wheel): no native code", wheel), version };
  if (!options.client && /^https?:/.test(wheel.location))
    return { ...unscanned(pkg, "not fetched: offline", wheel), version };
  return { ...unscanned(pkg, "", wheel), version, skipped: null };
}

/** Every package of the lock with the wheel it would install scanned. */
export async function scanLockClosure(path: string, options: LockScanOptions): Promise<LockScan> {
  const lock = readLockFile(path);
  const plans: PackageScan[] = [];
  for (const pkg of lock.packages) {
    try {
      plans.push(await planPackage(pkg, lock, options));
    } catch (error) {
      plans.push({
        ...unscanned(pkg, ""),
        skipped: null,
        error: errorMessage(error),
        unreachable: error instanceof FetchError,
      });
    }
  }
  const client = options.client;
  const before = client?.bytesReceived ?? 0;
  const work = plans.filter((p) => p.wheel && p.skipped === null && p.error === null);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < work.length) {
      const plan = work[next++] as PackageScan;
      try {
        plan.scan = await scanWheel(plan.wheel!.location, {
          ...(client ? { client } : {}),
          hashLocal: plan.wheel!.sha256 !== null,
        });
        plan.hashMatches =
          plan.scan.sha256 && plan.wheel!.sha256 ? plan.scan.sha256 === plan.wheel!.sha256 : null;
        if (plan.hashMatches === false)
          plan.error = `its SHA-256 is not the one the lock pins (${plan.wheel!.sha256!.slice(0, 12)}...)`;
      } catch (error) {
        plan.error = errorMessage(error);
        plan.unreachable = error instanceof FetchError;
      }
      options.onProgress?.(++done, work.length, plan.name);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 3, work.length) }, worker));
  return {
    lock: { kind: lock.kind, path: lock.path, indexUrls: lock.indexUrls, findLinks: lock.findLinks },
    platform: options.platform,
    packages: plans,
    bytesFetched: (client?.bytesReceived ?? 0) - before,
  };
}
