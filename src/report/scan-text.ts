/** `gpuprep scan`'s text report: each library's targets and verdict for the GPU, and what to do. */
import type { Style } from "./style.js";
import { formatComputeCapability, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";

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
}

const VERDICT_TEXT: Record<CoverageVerdict["how"], string> = {
  sass: "native",
  "ptx-jit": "ptx-jit",
  none: "CANNOT RUN",
};

export function renderScanText(
  reports: LibraryReport[],
  device: ScanDevice | null,
  examined: number,
  style: Style,
): string {
  const lines: string[] = [];
  lines.push(
    style.bold(`gpuprep scan`) +
      (device
        ? ` for ${device.label}, ${formatComputeCapability(device.capability)}`
        : " (no GPU given or found: targets only)"),
  );
  const withCode = reports.filter((r) => r.entryCount > 0);
  for (const report of reports) {
    const targets = [...report.sass, ...report.ptx, ...report.lto].join(" ") || "(no CUDA code)";
    let verdict = "";
    if (report.error) verdict = style.red(`error: ${report.error}`);
    else if (report.verdict) {
      const text = `${VERDICT_TEXT[report.verdict.how]}${report.verdict.via.length ? " via " + report.verdict.via[0] : ""}`;
      verdict =
        report.verdict.how === "sass"
          ? style.green(text)
          : report.verdict.how === "ptx-jit"
            ? style.yellow(text)
            : style.red(text);
    }
    lines.push(`  ${report.path}`);
    lines.push(`    ${targets}${verdict ? "  ->  " + verdict : ""}`);
  }
  const count = (how: CoverageVerdict["how"]) => withCode.filter((r) => r.verdict?.how === how).length;
  const errors = reports.filter((r) => r.error).length;
  lines.push("");
  lines.push(
    `${examined} ${examined === 1 ? "file" : "files"} examined, ${withCode.length} with CUDA code` +
      (device
        ? `: ${count("sass")} native, ${count("ptx-jit")} PTX JIT only, ${count("none")} cannot run`
        : "") +
      (errors ? `, ${errors} unreadable` : ""),
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
