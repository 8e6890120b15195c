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

export interface ScanTextInput {
  reports: LibraryReport[];
  device: ScanDevice | null;
  examined: number;
  packages?: PackageReport[];
  sources?: SourceReport[];
  findings?: ScanFinding[];
}

export function renderScanText(input: ScanTextInput, style: Style): string {
  const { reports, device, examined } = input;
  const packages = input.packages ?? [];
  const lines: string[] = [];
  lines.push(
    style.bold(`gpuprep scan`) +
      (device
        ? ` for ${device.label}, ${formatComputeCapability(device.capability)}`
        : " (no GPU given or found: targets only)"),
  );
  const withCode = reports.filter((r) => r.entryCount > 0);
  for (const report of reports.filter((r) => r.package === undefined))
    lines.push(...libraryLines(report, "  ", style));
  const images = (input.sources ?? []).filter((s) => s.kind === "image");
  for (const image of images) {
    lines.push(
      `  ${image.ref}: ${image.layers ?? 0} layers, ${bytes(image.sizeBytes ?? 0)} bytes of layers read` +
        (image.transfer === "registry"
          ? `, ${bytes(image.bytesFetched)} bytes fetched from the registry`
          : ""),
    );
    for (const report of reports.filter((r) => r.package === image.ref))
      lines.push(...libraryLines(report, "    ", style));
    if (image.removed?.length)
      lines.push(`    removed by a later layer (not in the image): ${image.removed.join(", ")}`);
  }
  for (const pkg of packages) {
    lines.push(`  ${packageHeader(pkg)}`);
    for (const report of reports.filter((r) => r.package !== undefined && r.package === pkg.filename))
      lines.push(...libraryLines(report, "    ", style));
  }
  for (const finding of input.findings ?? []) {
    const mark = finding.severity === "error" ? style.red("error") : style.yellow("warning");
    lines.push(`  ${mark}: ${finding.package}: ${finding.message}`);
  }
  const count = (how: CoverageVerdict["how"]) => withCode.filter((r) => r.verdict?.how === how).length;
  const errors = reports.filter((r) => r.error).length;
  const fetched = (input.sources ?? []).reduce((sum, s) => sum + s.bytesFetched, 0);
  lines.push("");
  lines.push(
    `${examined} ${examined === 1 ? "file" : "files"} examined, ${withCode.length} with CUDA code` +
      (device
        ? `: ${count("sass")} native, ${count("ptx-jit")} PTX JIT only, ${count("none")} cannot run`
        : "") +
      (errors ? `, ${errors} unreadable` : "") +
      (packages.length ? `; ${packages.length} ${packages.length === 1 ? "package" : "packages"}` : "") +
      ((input.sources ?? []).some((s) => s.transfer !== "file" && s.transfer !== null)
        ? `; ${bytes(fetched)} bytes fetched`
        : ""),
  );
  if (device && count("ptx-jit") > 0) {
    lines.push(
      "PTX JIT: the driver compiles these at first load (seconds to minutes); keep the JIT cache between runs: " +
        "CUDA_CACHE_MAXSIZE=4294967296 and a persistent CUDA_CACHE_PATH (default ~/.nv/ComputeCache).",
    );
  }
  if (device && count("none") > 0) {
    const arch = `${device.capability.major}.${device.capability.minor}`;
    lines.push(
      `Libraries that cannot run fail with "no kernel image is available for execution on the device": ` +
        `install a build that includes sm_${device.capability.major}${device.capability.minor}, or rebuild with TORCH_CUDA_ARCH_LIST="${arch}".`,
    );
  }
  return lines.join("\n") + "\n";
}
