/** `gpuprep scan`: which GPU architectures the CUDA code in binaries covers, and what a GPU can run. */
import { writeDocument, writeText } from "../report/terminal.js";
import { renderScanText, type LibraryReport, type ScanDevice as Device } from "../report/scan-text.js";
import { renderJsonDocument } from "../report/envelope.js";
import { SCAN_SCHEMA, SCAN_SCHEMA_VERSION } from "../report/document-ids.js";
import { importDirectories } from "../gather/binaries.js";
import { gatherGpuList, type GpuListFacts } from "../gather/gpus.js";
import { localTransport } from "../transports/local.js";
import type { Transport } from "../transports/types.js";
import { stat } from "node:fs/promises";
import { UserError, errorMessage } from "../errors.js";
import { EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, defineCommand, type OptionTable } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { findBinaries, scanFiles, coverageOf, distinctTargets, type FileScan } from "../fatbin/index.js";
import { startProgress } from "../util/console-status.js";
import { coverageFor, formatComputeCapability, parseComputeCapability } from "../kb/compat.js";

const OPTIONS = {
  python: {
    type: "string",
    value: "PATH",
    description: "every binary in that interpreter's site-packages\n(torch/lib and nvidia/* included)",
  },
  gpu: {
    type: "string",
    value: "NAME|sm_XY|X.Y",
    description: "the GPU to judge for (default: the local GPU from nvidia-smi)",
  },
  from: {
    type: "string",
    value: "FILE",
    description: "judge for the GPU in a facts snapshot (`gpuprep doctor --save FILE`)",
  },
  all: { type: "boolean", description: "also list libraries without CUDA code" },
  json: { type: "boolean", description: "machine-readable output" },
} as const satisfies OptionTable;

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
  // Loaded only for --gpu: the KB's schemas cost more start-up than scanning libtorch_cuda.so's
  // headers, and a plain scan never needs them.
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  if (capability) {
    const cc = `${capability.major}.${capability.minor}`;
    // sm_999 parses, but no GPU has it: judging for it would say "cannot run" of everything.
    if (!kb.arch(cc))
      throw new UserError(
        `scan: --gpu ${text} is not a known architecture (compute capability ${cc})`,
        `known: ${kb.data.archs.map((row) => `sm_${row.computeCapability.replace(".", "")}`).join(", ")}`,
      );
    return { label: `sm_${capability.major}${capability.minor}`, capability };
  }
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

export const scanCommand = defineCommand({
  name: "scan",
  title: "which GPU architectures the CUDA code in binaries covers",
  positionals: "FILE|DIR...",
  usage: [
    ["FILE|DIR...", ".so / .o / .a files, directories searched recursively"],
    ["--python PATH", "every binary in that interpreter's site-packages"],
  ],
  options: OPTIONS,
  outro: `verdicts: native (a SASS cubin runs), ptx-jit (the driver compiles PTX at first load; slow
first run), none (cannot run: "no kernel image is available for execution on the device").
exit status: 0 every library with CUDA code can run on the GPU, 1 some cannot, 2 error, also when
no file examined could be read (each is still listed with its reason)`,
  examples: [
    ["gpuprep scan --python .venv/bin/python", "every binary that venv imports, judged for the local GPU"],
    ["gpuprep scan build/lib/my_ext.so --gpu sm_120", "one extension, judged for a Blackwell RTX GPU"],
    [
      "gpuprep scan /usr/local/cuda/lib64 --all --json",
      "a directory, libraries without CUDA code too, as JSON",
    ],
  ],
  async run({ values, positionals }) {
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
      writeDocument(
        renderJsonDocument(SCAN_SCHEMA, SCAN_SCHEMA_VERSION, {
          device: device
            ? { label: device.label, computeCapability: formatComputeCapability(device.capability) }
            : null,
          filesExamined: files.length,
          libraries: reports,
        }),
      );
    } else {
      writeText(renderScanText(reports, device, files.length, makeStyle(useColor())));
    }
    // Nothing readable means nothing was checked: not a clean result (issue 12).
    if (files.length > 0 && scans.every((s) => s.error !== null)) return EXIT_TOOL_ERROR;
    return cannotRun ? EXIT_FINDINGS : EXIT_OK;
  },
});
