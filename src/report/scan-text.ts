/** `gpuprep scan`'s text report: each library's targets and verdict for the GPU, and what to do. */
import type { Style } from "./style.js";
import { formatComputeCapability, type CoverageVerdict } from "../kb/compat.js";
import type {
  LibraryReport,
  PackageReport,
  ScanDevice,
  ScanFinding,
  SourceReport,
} from "../remote/scan-result.js";

const VERDICT_TEXT: Record<CoverageVerdict["how"], string> = {
  sass: "native",
  "ptx-jit": "ptx-jit",
  none: "CANNOT RUN",
};

const TRANSFER: Record<string, string> = {
  ranges: "HTTP Range requests",
  stream: "the whole file, read once (no Range support)",
  registry: "registry",
  file: "on disk",
};

const bytes = (n: number) => n.toLocaleString("en-US");

function verdictText(report: LibraryReport, style: Style): string {
  if (report.error) return style.red(`error: ${report.error}`);
  if (!report.verdict) return "";
  const text = `${VERDICT_TEXT[report.verdict.how]}${report.verdict.via.length ? " via " + report.verdict.via[0] : ""}`;
  return report.verdict.how === "sass"
    ? style.green(text)
    : report.verdict.how === "ptx-jit"
      ? style.yellow(text)
      : style.red(text);
}

function libraryLines(report: LibraryReport, indent: string, style: Style): string[] {
  const targets = [...report.sass, ...report.ptx, ...report.lto].join(" ") || "(no CUDA code)";
  const verdict = verdictText(report, style);
  const layer = report.layer !== undefined ? ` (layer ${report.layer + 1})` : "";
  return [`${indent}${report.path}${layer}`, `${indent}  ${targets}${verdict ? "  ->  " + verdict : ""}`];
}

function packageHeader(pkg: PackageReport): string {
  const name = pkg.filename ?? `${pkg.name} ${pkg.version ?? ""}`.trim();
  if (pkg.error) return `${name}: ERROR ${pkg.error}`;
  if (pkg.skipped) return `${name}: not scanned: ${pkg.skipped}`;
  const fetched =
    pkg.transfer && pkg.transfer !== "file" && pkg.sizeBytes !== null
      ? `, ${bytes(pkg.bytesFetched)} of ${bytes(pkg.sizeBytes)} bytes fetched (${TRANSFER[pkg.transfer]})`
      : "";
  const cuda =
    pkg.librariesWithCuda === 0
      ? ": no CUDA code"
      : `: ${pkg.librariesWithCuda} ${pkg.librariesWithCuda === 1 ? "library" : "libraries"} with CUDA code`;
  const variant = pkg.variant
    ? `; variant ${pkg.variant.label}${pkg.variant.compatible === null ? "" : pkg.variant.compatible ? " (a variant-aware installer accepts it here)" : " (a variant-aware installer would not install it here)"}`
    : "";
  return `${name}${cuda}${fetched}${variant}${pkg.note ? `; ${pkg.note}` : ""}`;
}

interface ScanTextInput {
  reports: LibraryReport[];
  device: ScanDevice | null;
  examined: number;
  packages?: PackageReport[];
  sources?: SourceReport[];
  findings?: ScanFinding[];
}

/** Each image read, with its libraries under it and what a later layer removed. */
function imageLines(input: ScanTextInput, style: Style): string[] {
  const lines: string[] = [];
  for (const image of (input.sources ?? []).filter((s) => s.kind === "image")) {
    lines.push(
      `  ${image.ref}: ${image.layers ?? 0} layers, ${bytes(image.sizeBytes ?? 0)} bytes of layers read` +
        (image.transfer === "registry"
          ? `, ${bytes(image.bytesFetched)} bytes fetched from the registry`
          : ""),
    );
    for (const report of input.reports.filter((r) => r.package === image.ref))
      lines.push(...libraryLines(report, "    ", style));
    if (image.removed?.length)
      lines.push(`    removed by a later layer (not in the image): ${image.removed.join(", ")}`);
  }
  return lines;
}

/** Each wheel with its libraries under it. */
function packageLines(input: ScanTextInput, style: Style): string[] {
  const lines: string[] = [];
  for (const pkg of input.packages ?? []) {
    lines.push(`  ${packageHeader(pkg)}`);
    for (const report of input.reports.filter((r) => r.package !== undefined && r.package === pkg.filename))
      lines.push(...libraryLines(report, "    ", style));
  }
  return lines;
}

/** The count line: files, with CUDA code, each verdict, unreadable, packages, bytes fetched. */
function totalsLine(input: ScanTextInput, withCode: LibraryReport[]): string {
  const { reports, device, examined } = input;
  const packages = input.packages ?? [];
  const count = (how: CoverageVerdict["how"]) => withCode.filter((r) => r.verdict?.how === how).length;
  const errors = reports.filter((r) => r.error).length;
  const fetched = (input.sources ?? []).reduce((sum, s) => sum + s.bytesFetched, 0);
  return (
    `${examined} ${examined === 1 ? "file" : "files"} examined, ${withCode.length} with CUDA code` +
    (device
      ? `: ${count("sass")} native, ${count("ptx-jit")} PTX JIT only, ${count("none")} cannot run`
      : "") +
    (errors ? `, ${errors} unreadable` : "") +
    (packages.length ? `; ${packages.length} ${packages.length === 1 ? "package" : "packages"}` : "") +
    ((input.sources ?? []).some((s) => s.transfer !== "file" && s.transfer !== null)
      ? `; ${bytes(fetched)} bytes fetched`
      : "")
  );
}

/** What to do about libraries that run only through the PTX JIT, or not at all, on this GPU. */
function adviceLines(device: ScanDevice, withCode: LibraryReport[]): string[] {
  const lines: string[] = [];
  const count = (how: CoverageVerdict["how"]) => withCode.filter((r) => r.verdict?.how === how).length;
  if (count("ptx-jit") > 0) {
    lines.push(
      "PTX JIT: the driver compiles these at first load (seconds to minutes); keep the JIT cache between runs: " +
        "CUDA_CACHE_MAXSIZE=4294967296 and a persistent CUDA_CACHE_PATH (default ~/.nv/ComputeCache).",
    );
  }
  if (count("none") > 0) {
    const arch = `${device.capability.major}.${device.capability.minor}`;
    lines.push(
      `Libraries that cannot run fail with "no kernel image is available for execution on the device": ` +
        `install a build that includes sm_${device.capability.major}${device.capability.minor}, or rebuild with TORCH_CUDA_ARCH_LIST="${arch}".`,
    );
  }
  return lines;
}

export function renderScanText(input: ScanTextInput, style: Style): string {
  const { reports, device } = input;
  const withCode = reports.filter((r) => r.entryCount > 0);
  const lines = [
    style.bold(`gpuprep scan`) +
      (device
        ? ` for ${device.label}, ${formatComputeCapability(device.capability)}`
        : " (no GPU given or found: targets only)"),
    ...reports.filter((r) => r.package === undefined).flatMap((report) => libraryLines(report, "  ", style)),
    ...imageLines(input, style),
    ...packageLines(input, style),
  ];
  for (const finding of input.findings ?? []) {
    const mark = finding.severity === "error" ? style.red("error") : style.yellow("warning");
    lines.push(`  ${mark}: ${finding.package}: ${finding.message}`);
  }
  lines.push("", totalsLine(input, withCode), ...(device ? adviceLines(device, withCode) : []));
  return lines.join("\n") + "\n";
}
