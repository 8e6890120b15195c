/** `gpuprep scan`: which GPU architectures the CUDA code in binaries covers, and what a GPU can run. */
import { writeText } from "../report/terminal.js";
import { renderJsonDocument } from "../report/envelope.js";
import { SCAN_SCHEMA, SCAN_SCHEMA_VERSION } from "../report/document-ids.js";
import { importDirectories } from "../gather/binaries.js";
import { gatherGpuList, type GpuListFacts } from "../gather/gpus.js";
import { localTransport } from "../transports/local.js";
import type { Transport } from "../transports/types.js";
import { stat } from "node:fs/promises";
import { UserError, errorMessage } from "../errors.js";
import { EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, type Command } from "./command.js";
import { parseCommandArgs } from "./args.js";
import { makeStyle, useColor, type Style } from "../report/style.js";
import { findBinaries, scanFiles, coverageOf, distinctTargets, type FileScan } from "../fatbin/index.js";
import { startProgress } from "../util/console-status.js";
import {
  coverageFor,
  formatComputeCapability,
  parseComputeCapability,
  type ComputeCapability,
  type CoverageVerdict,
} from "../kb/compat.js";

const HELP = `gpuprep scan: which GPU architectures the CUDA code in binaries covers

usage:
  gpuprep scan FILE|DIR...          .so / .o / .a files, directories searched recursively
  gpuprep scan --python PATH        every binary in that interpreter's site-packages
                                    (torch/lib and nvidia/* included)

flags:
  --gpu NAME|sm_XY|X.Y   the GPU to judge for (default: the local GPU from nvidia-smi)
  --from FILE            judge for the GPU in a facts snapshot (\`gpuprep doctor --save FILE\`)
  --all                  also list libraries without CUDA code
  --json                 machine-readable output

verdicts: native (a SASS cubin runs), ptx-jit (the driver compiles PTX at first load; slow
first run), none (cannot run: "no kernel image is available for execution on the device").
exit status: 0 every library with CUDA code can run on the GPU, 1 some cannot, 2 error, also when
no file examined could be read (each is still listed with its reason)`;

interface Device {
  label: string;
  capability: ComputeCapability;
}

/** The first GPU of gathered facts (nvidia-smi's GPU 0, as judged before), when it has a capability. */
function deviceFromGpus(nvidia: GpuListFacts, where: string): Device | null {
  const gpu = nvidia.gpus[0];
  const capability = gpu?.computeCapability ? parseComputeCapability(gpu.computeCapability) : null;
  return gpu && capability && gpu.name ? { label: `${gpu.name} (${where})`, capability } : null;
}

/** The GPU of a saved snapshot; the facts reader (zod) loads only here, never for a plain scan. */
async function deviceFromSnapshot(path: string): Promise<Device> {
  const { readFactsFile } = await import("../facts/io.js");
  const device = deviceFromGpus(readFactsFile(path).host.nvidia, `from ${path}`);
  if (!device)
    throw new UserError(
      `scan: the snapshot ${path} has no GPU with a compute capability`,
      "give the GPU with --gpu NAME|sm_XY instead",
    );
  return device;
}

async function deviceFromFlag(text: string): Promise<Device> {
  const capability = parseComputeCapability(text);
  if (capability) return { label: `sm_${capability.major}${capability.minor}`, capability };
  // Loaded only for a GPU given by name: the KB's schemas cost more start-up than scanning
  // libtorch_cuda.so's headers, and a plain scan never needs them.
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  const resolution = kb.resolveGpu(text);
  const row = resolution.match;
  const rowCapability = row ? parseComputeCapability(row.computeCapability) : null;
  if (!row || !rowCapability) {
    const close = resolution.candidates.slice(0, 4).map((c) => c.name);
    throw new UserError(
      `scan: unknown GPU "${text}"`,
      close.length
        ? `did you mean: ${close.join(", ")}? (or give sm_XY / X.Y)`
        : "give a capability: sm_120 or 12.0",
    );
  }
  return { label: `${row.name} (${row.computeCapability})`, capability: rowCapability };
}

/** The directories the interpreter imports from (site-packages, PYTHONPATH, user site). */
async function sitePackages(transport: Transport): Promise<string[]> {
  try {
    return await importDirectories(transport);
  } catch (error) {
    throw new UserError(
      `scan: cannot ask ${transport.python} for its import directories (${errorMessage(error).split("\n")[0]})`,
      "give an interpreter path that runs, e.g. --python .venv/bin/python",
    );
  }
}

interface LibraryReport {
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

function renderText(reports: LibraryReport[], device: Device | null, examined: number, style: Style): string {
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
    `${examined} files examined, ${withCode.length} with CUDA code` +
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

export const scanCommand: Command = {
  name: "scan",
  summary: "which GPU architectures the CUDA code in .so files covers",
  help: HELP,
  examples: [
    ["gpuprep scan --python .venv/bin/python", "every binary that venv imports, judged for the local GPU"],
    ["gpuprep scan build/lib/my_ext.so --gpu sm_120", "one extension, judged for a Blackwell RTX GPU"],
    [
      "gpuprep scan /usr/local/cuda/lib64 --all --json",
      "a directory, libraries without CUDA code too, as JSON",
    ],
  ],
  async run(argv) {
    const { values, positionals } = parseCommandArgs("scan", {
      args: argv,
      allowPositionals: true,
      options: {
        python: { type: "string" },
        gpu: { type: "string" },
        from: { type: "string" },
        all: { type: "boolean" },
        json: { type: "boolean" },
      },
    });
    if (positionals.length === 0 && values.python === undefined) {
      throw new UserError("scan: nothing to scan", "give files or directories, or --python PATH");
    }
    for (const path of positionals) {
      const info = await stat(path).catch(() => null);
      if (!info)
        throw new UserError(
          `scan: cannot read ${path}`,
          "check the path; directories are searched recursively",
        );
    }
    if (values.gpu !== undefined && values.from !== undefined)
      throw new UserError("scan: --gpu and --from both name the GPU", "give one of them");
    // Where the interpreter and nvidia-smi run; scan reads the files on this machine, so here.
    const transport = localTransport(values.python ?? "python3");
    const roots = [...positionals, ...(values.python !== undefined ? await sitePackages(transport) : [])];
    // A GPU named on the command line or in a snapshot is checked before any reading;
    // nvidia-smi (tens of ms or more) runs while the files are read.
    const named =
      values.gpu !== undefined
        ? await deviceFromFlag(values.gpu)
        : values.from !== undefined
          ? await deviceFromSnapshot(values.from)
          : null;
    const local =
      named === null
        ? gatherGpuList(transport).then((nvidia) => deviceFromGpus(nvidia, "local"))
        : Promise.resolve(null);

    const progress = startProgress("scan", "finding binaries");
    let scans: FileScan[];
    let files: string[];
    try {
      files = await findBinaries(roots);
      scans = await scanFiles(files, {
        onProgress: ({ done, total }) => progress.update(`${done}/${total} files`),
      });
    } finally {
      progress.end(); // gone before the report (or an error) is printed
    }
    const device = named ?? (await local);
    const explicit = new Set(positionals);
    const reports: LibraryReport[] = scans
      // A text file named .so (a linker script) inside a directory is not an error; one named on
      // the command line is reported.
      .filter(
        (s) =>
          values.all ||
          s.entries.length > 0 ||
          (s.error && (s.error.code !== "not-elf" || explicit.has(s.path))),
      )
      .map((scan) => {
        const coverage = coverageOf(scan);
        const loadable = [...coverage.sass, ...coverage.ptx];
        return {
          ...coverage,
          lto: distinctTargets(scan.entries, "lto-ir"),
          verdict: device && loadable.length > 0 ? coverageFor(loadable, device.capability) : null,
        };
      })
      .sort((a, b) => a.path.localeCompare(b.path));

    const cannotRun = reports.some((r) => r.verdict?.how === "none");
    if (values.json) {
      process.stdout.write(
        renderJsonDocument(SCAN_SCHEMA, SCAN_SCHEMA_VERSION, {
          device: device
            ? { label: device.label, computeCapability: formatComputeCapability(device.capability) }
            : null,
          filesExamined: files.length,
          libraries: reports,
        }),
      );
    } else {
      writeText(renderText(reports, device, files.length, makeStyle(useColor())));
    }
    // Nothing readable means nothing was checked: not a clean result (issue 12).
    if (files.length > 0 && scans.every((s) => s.error !== null)) return EXIT_TOOL_ERROR;
    return cannotRun ? EXIT_FINDINGS : EXIT_OK;
  },
};
