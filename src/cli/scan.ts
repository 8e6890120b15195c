/** `gpuprep scan`: which GPU architectures the CUDA code in binaries covers, and what a GPU can run. */
import { writeDocument, writeText } from "../report/terminal.js";
import { renderScanText, type LibraryReport, type ScanDevice as Device } from "../report/scan-text.js";
import { renderJsonDocument } from "../report/envelope.js";
import { importDirectories } from "../gather/binaries.js";
import { runCommand } from "../transports/spawn.js";
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
  all: { type: "boolean", description: "also list libraries without CUDA code" },
  json: { type: "boolean", description: "machine-readable output" },
} as const satisfies OptionTable;

async function localDevice(): Promise<Device | null> {
  try {
    const { stdout, code } = await runCommand(
      "nvidia-smi",
      ["--query-gpu=name,compute_cap", "--format=csv,noheader"],
      { timeoutMs: 15_000 },
    );
    if (code !== 0) return null;
    const [name, cap] = (stdout.trim().split("\n")[0] ?? "").split(",").map((s) => s.trim());
    const capability = cap ? parseComputeCapability(cap) : null;
    return capability && name ? { label: `${name} (local)`, capability } : null;
  } catch {
    return null;
  }
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
async function sitePackages(python: string): Promise<string[]> {
  try {
    return await importDirectories(python);
  } catch (error) {
    throw new UserError(
      `scan: cannot ask ${python} for its import directories (${errorMessage(error).split("\n")[0]})`,
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
    const roots = [...positionals, ...(values.python !== undefined ? await sitePackages(values.python) : [])];
    // A GPU named on the command line is checked before any reading; nvidia-smi (tens of ms or
    // more) runs while the files are read.
    const named = values.gpu !== undefined ? await deviceFromFlag(values.gpu) : null;
    const local = values.gpu === undefined ? localDevice() : Promise.resolve(null);

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
        renderJsonDocument("gpuprep.scan", 1, {
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
