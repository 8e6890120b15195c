/**
 * `gpuprep scan` of what is not installed: wheels (paths or URLs), a package index, a lock or
 * requirements file, container images (a `docker save` tar, an OCI layout, docker://REF). Reads
 * through src/remote and turns each result into the scan report's libraries and packages.
 */
import { statSync } from "node:fs";
import { UserError } from "../errors.js";
import { DEFAULT_HTTP_LIMITS, HttpClient } from "./http.js";
import { scanWheel, type WheelScan } from "./wheel.js";
import { scanLockClosure, type LockScan } from "./lock-scan.js";
import { findLinksFiles, pickWheel, projectFiles, type IndexFile } from "./simple-index.js";
import { openImageArchive, openOciLayout, scanImage, type ImageScan } from "./image.js";
import { openRegistryImage } from "./registry.js";
import {
  chooseVariant,
  compareVariantWithBinaries,
  parseVariantJson,
  type VariantChoice,
} from "./variant.js";
import type { ScanTarget } from "./scan-inputs.js";
import {
  libraryReport,
  type LibraryReport,
  type PackageReport,
  type RemoteResult,
  type ScanFinding,
} from "./scan-result.js";
import { normalizeName } from "../util/package-name.js";

export function httpClient(timeoutSeconds: number | null, maxBytes: number | null): HttpClient {
  return new HttpClient({
    ...DEFAULT_HTTP_LIMITS,
    ...(timeoutSeconds !== null ? { deadlineMs: timeoutSeconds * 1000 } : {}),
    ...(maxBytes !== null ? { maxBytes } : {}),
  });
}

/** The worst verdict over a package's libraries with CUDA code (none < ptx-jit < sass). */
function packageVerdict(libraries: LibraryReport[]): PackageReport["verdict"] {
  const hows = libraries.filter((l) => l.verdict).map((l) => l.verdict!.how);
  if (hows.length === 0) return null;
  return hows.includes("none") ? "none" : hows.includes("ptx-jit") ? "ptx-jit" : "sass";
}

function variantReport(
  scan: WheelScan,
  target: ScanTarget,
  findings: ScanFinding[],
): PackageReport["variant"] {
  if (scan.variantError) {
    findings.push({
      severity: "warning",
      package: scan.filename,
      message: `variant.json cannot be read: ${scan.variantError}`,
    });
    return null;
  }
  if (!scan.variant) return null;
  const label = scan.wheel?.variant ?? Object.keys(scan.variant.variants)[0] ?? null;
  const props = label ? scan.variant.variants[label] : undefined;
  if (!label || !props) {
    findings.push({
      severity: "warning",
      package: scan.filename,
      message: "variant.json does not describe the wheel's own label",
    });
    return null;
  }
  for (const finding of compareVariantWithBinaries(label, props, scan.libraries, target.knownCapabilities))
    findings.push({ ...finding, package: scan.filename });
  const choice: VariantChoice | null = target.capability
    ? chooseVariant(scan.variant, { capability: target.capability, driverCuda: target.driverCuda })
    : null;
  return {
    label,
    properties: props,
    compatible: choice ? choice.ordered.includes(label) : null,
    assumption: choice?.assumption ?? null,
  };
}

/** One scanned wheel into the report. */
export function addWheel(
  result: RemoteResult,
  scan: WheelScan,
  target: ScanTarget,
  extra: Partial<PackageReport> = {},
): void {
  const libraries = scan.libraries
    .filter((l) => l.entries.length > 0 || (l.error && l.error.code !== "not-elf"))
    .map((l) => libraryReport(l, target.capability, scan.filename));
  result.libraries.push(...libraries);
  result.filesExamined += scan.libraries.length;
  result.packages.push({
    name: scan.wheel?.distribution ?? scan.filename,
    version: scan.wheel?.version ?? null,
    filename: scan.filename,
    location: scan.location,
    sizeBytes: scan.sizeBytes,
    bytesFetched: scan.bytesFetched,
    transfer: scan.transfer,
    librariesWithCuda: libraries.filter((l) => l.entryCount > 0).length,
    verdict: packageVerdict(libraries),
    variant: variantReport(scan, target, result.findings),
    skipped: null,
    error: null,
    ...extra,
  });
}

export async function scanWheelInput(
  result: RemoteResult,
  location: string,
  target: ScanTarget,
  client: HttpClient,
): Promise<void> {
  const scan = await scanWheel(location, { client });
  addWheel(result, scan, target);
  result.sources.push({
    ref: location,
    kind: "wheel",
    transfer: scan.transfer,
    sizeBytes: scan.sizeBytes,
    bytesFetched: scan.bytesFetched,
  });
}

export async function scanImageInput(
  result: RemoteResult,
  ref: string,
  target: ScanTarget,
  client: HttpClient,
  onLayer?: (i: number, n: number) => void,
): Promise<ImageScan> {
  const source = ref.startsWith("docker://")
    ? await openRegistryImage(ref, client, target.platform.arch)
    : statSync(ref).isDirectory()
      ? await openOciLayout(ref, target.platform.arch)
      : await openImageArchive(ref, target.platform.arch);
  const scan = await scanImage(source, onLayer);
  const libraries = scan.libraries
    .filter((l) => l.entries.length > 0 || (l.error && l.error.code !== "not-elf"))
    .map((l) => libraryReport(l, target.capability, ref, l.layer));
  result.libraries.push(...libraries);
  result.filesExamined += scan.filesExamined;
  result.sources.push({
    ref,
    kind: "image",
    transfer: scan.kind === "registry" ? "registry" : "file",
    sizeBytes: scan.layerBytes,
    bytesFetched: scan.bytesFetched,
    layers: scan.layers,
    removed: scan.removed,
  });
  for (const path of scan.unsafePaths)
    result.findings.push({
      severity: "warning",
      package: ref,
      message: `a layer holds an entry that leaves the root (${path.slice(0, 120)}): skipped`,
    });
  return scan;
}

/** A lock or requirements file: each package's wheel for the machine, scanned. */
export async function scanLockInput(
  result: RemoteResult,
  path: string,
  target: ScanTarget,
  client: HttpClient | null,
  onProgress?: (done: number, total: number, name: string) => void,
): Promise<LockScan> {
  const lock = await scanLockClosure(path, {
    platform: target.platform,
    client,
    ...(onProgress ? { onProgress } : {}),
  });
  for (const pkg of lock.packages) {
    if (pkg.scan) {
      addWheel(result, pkg.scan, target, { name: pkg.name, version: pkg.version, error: pkg.error });
      continue;
    }
    result.packages.push({
      name: pkg.name,
      version: pkg.version,
      filename: pkg.wheel?.filename ?? null,
      location: pkg.wheel?.location ?? null,
      sizeBytes: null,
      bytesFetched: 0,
      transfer: null,
      librariesWithCuda: 0,
      verdict: null,
      variant: null,
      skipped: pkg.skipped,
      error: pkg.error,
    });
  }
  result.sources.push({
    ref: path,
    kind: "lock",
    transfer: null,
    sizeBytes: null,
    bytesFetched: lock.bytesFetched,
  });
  return lock;
}

/** `--index URL --package SPEC`: the wheel an installer picks there for the machine, and (PEP 825) its variant. */
export async function scanIndexInput(
  result: RemoteResult,
  spec: string,
  indexUrls: string[],
  findLinks: string[],
  target: ScanTarget,
  client: HttpClient,
): Promise<void> {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$/.exec(spec.trim());
  if (!match)
    throw new UserError(
      `--package "${spec.slice(0, 60)}" is not a requirement`,
      "write NAME or NAME==VERSION",
    );
  const [, name, specifier] = match as unknown as [string, string, string];
  const files: IndexFile[] = [];
  for (const links of findLinks) files.push(...(await findLinksFiles(client, links)));
  for (const index of indexUrls) files.push(...(await projectFiles(client, index, name)));
  const outcome = pickWheel(files, name, specifier, target.platform);
  if (!outcome.picked)
    throw new UserError(
      `${name}${specifier}: ${outcome.reason}`,
      "check the name, the version and --python-version / --arch",
    );
  let chosen = outcome.picked.file;
  let note: string | null = null;
  if (outcome.picked.variants.length > 0 && target.capability) {
    const picked = await chooseFromVariants(
      client,
      files,
      name,
      outcome.picked.wheel.version,
      outcome.picked.variants,
      target,
    );
    if (picked) ({ file: chosen, note } = picked);
  }
  const location = chosen.url.startsWith("file:") ? new URL(chosen.url).pathname : chosen.url;
  const scan = await scanWheel(location, { client });
  addWheel(result, scan, target, note ? { skipped: null, note } : {});
  result.sources.push({
    ref: indexUrls[0] ?? findLinks[0] ?? "",
    kind: "index",
    transfer: scan.transfer,
    sizeBytes: scan.sizeBytes,
    bytesFetched: client.bytesReceived,
  });
}

/** PEP 825: the index's {name}-{version}-variants.json, ordered for the machine; the best variant's file. */
async function chooseFromVariants(
  client: HttpClient,
  files: IndexFile[],
  name: string,
  version: string,
  variants: { file: IndexFile; wheel: { variant: string | null } }[],
  target: ScanTarget,
): Promise<{ file: IndexFile; note: string } | null> {
  const metaName = `${normalizeName(name).replace(/-/g, "_")}-${version}-variants.json`;
  const meta = files.find((f) => f.filename === metaName);
  if (!meta) return null;
  const response = await client.fetchBytes(meta.url, { maxBytes: 1024 * 1024 });
  if (response.status !== 200) return null;
  const choice = chooseVariant(parseVariantJson(response.body.toString("utf8")), {
    capability: target.capability!,
    driverCuda: target.driverCuda,
  });
  const file = variants.find((v) => v.wheel.variant === choice.label)?.file;
  return file
    ? {
        file,
        note: `variant ${choice.label} picked by PEP 825 ordering (${choice.ordered.join(" > ")})${choice.assumption ? `; ${choice.assumption}` : ""}`,
      }
    : null;
}
