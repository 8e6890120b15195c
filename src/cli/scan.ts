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
import {
  coverageFor,
  formatComputeCapability,
  parseComputeCapability,
  type ComputeCapability,
} from "../kb/compat.js";
import type { CpuArch } from "../remote/wheel-tags.js";
import { classifyInput, newResult, type ScanTarget } from "./scan-inputs.js";

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
  target: {
    type: "string",
    value: "NAME",
    description:
      "a GPU or system by name (dgx-spark, jetson-thor, rtx-5090): its\ncapability for the verdicts, its CPU for the wheels and images",
  },
  lock: {
    type: "string",
    value: "FILE",
    description:
      "uv.lock, pylock.toml or a requirements file: the wheel each package\nwould install on the target, fetched from the URLs the file names",
  },
  index: {
    type: "string",
    value: "URL",
    multiple: true,
    description: "a package index (PEP 503/691 simple API) to pick --package from",
  },
  "find-links": {
    type: "string",
    value: "DIR|URL",
    multiple: true,
    description: "a directory or page of wheels to pick --package from",
  },
  package: {
    type: "string",
    value: "SPEC",
    multiple: true,
    description: "NAME or NAME==VERSION: the wheel an installer would pick (--index)",
  },
  arch: {
    type: "string",
    value: "x86_64|aarch64",
    description: "the target's CPU for wheels and images (default: --target's, else this machine's)",
  },
  "python-version": {
    type: "string",
    value: "X.Y",
    description: "the target's Python for wheel tags (default 3.12)",
  },
  glibc: {
    type: "string",
    value: "X.Y",
    description: "the target's newest glibc for manylinux tags (default 2.39)",
  },
  "cuda-driver": {
    type: "string",
    value: "X.Y",
    description:
      "the CUDA version the target's driver supports, for wheel variants\n(default: --target's where the KB has it)",
  },
  offline: { type: "boolean", description: "--lock: read only wheels on disk, fetch nothing" },
  timeout: {
    type: "string",
    value: "SECONDS",
    description: "the most time all downloads together may take (default 1800)",
  },
  "max-bytes": {
    type: "string",
    value: "N",
    description: "the most bytes all downloads together may fetch (default 64 GiB)",
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

/** A GPU or system by name (--target): its capability, CPU and, for a system, its driver's CUDA. */
async function targetFromName(
  text: string,
): Promise<{ device: Device; arch: CpuArch | null; driverCuda: string | null }> {
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  const system = kb.system(text);
  const row = kb.resolveGpu(system?.gpu ?? text).match;
  const capability = row ? parseComputeCapability(row.computeCapability) : null;
  if (!row || !capability) {
    const close = kb
      .resolveGpu(text)
      .candidates.slice(0, 4)
      .map((c) => c.name);
    throw new UserError(
      `scan: --target "${text}" is not a GPU or system gpuprep knows`,
      close.length ? `did you mean: ${close.join(", ")}?` : "see `gpuprep kb gpu NAME`",
    );
  }
  return {
    device: { label: `${system?.name ?? row.name} (${row.computeCapability})`, capability },
    arch: row.hostCpuArch,
    driverCuda: system?.cuda ?? null,
  };
}

function parseArch(text: string): CpuArch {
  const value = text.toLowerCase();
  if (value === "x86_64" || value === "amd64") return "x86_64";
  if (value === "aarch64" || value === "arm64") return "aarch64";
  throw new UserError(
    `scan: --arch "${text.slice(0, 20)}" is not x86_64 or aarch64`,
    "give x86_64 or aarch64",
  );
}

function parseDotted(text: string, flag: string): [number, number] {
  const match = /^(\d{1,2})\.(\d{1,3})$/.exec(text);
  if (!match)
    throw new UserError(`scan: ${flag} "${text.slice(0, 20)}" is not X.Y`, `give ${flag} like 3.12`);
  return [Number(match[1]), Number(match[2])];
}

function positiveNumber(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new UserError(
      `scan: ${flag} "${text.slice(0, 20)}" is not a positive whole number`,
      `give ${flag} N`,
    );
  return value;
}

async function knownCapabilities(): Promise<ComputeCapability[]> {
  const { loadKnowledgeBase } = await import("../kb/index.js");
  return loadKnowledgeBase()
    .data.gpus.map((g) => parseComputeCapability(g.computeCapability))
    .filter((c): c is ComputeCapability => c !== null);
}

type Values = Parameters<Parameters<typeof defineCommand<typeof OPTIONS>>[0]["run"]>[0]["values"];

/** The machine to judge for, and its platform for wheel tags and images. */
async function scanTarget(values: Values, named: Device | null, remote: boolean) {
  let arch: CpuArch | null = values.arch !== undefined ? parseArch(values.arch) : null;
  let device = named;
  let driverCuda: string | null = null;
  if (values.target !== undefined) {
    const found = await targetFromName(values.target);
    device = found.device;
    if (arch && found.arch && arch !== found.arch)
      throw new UserError(`scan: ${values.target} has an ${found.arch} CPU, not ${arch}`, "drop --arch");
    arch ??= found.arch;
    driverCuda = found.driverCuda;
  }
  if (values["cuda-driver"] !== undefined)
    driverCuda = parseDotted(values["cuda-driver"], "--cuda-driver").join(".");
  const python =
    values["python-version"] !== undefined
      ? parseDotted(values["python-version"], "--python-version").join(".")
      : "3.12";
  const glibc = parseDotted(values.glibc ?? "2.39", "--glibc");
  const target: ScanTarget = {
    capability: device?.capability ?? null,
    platform: { arch: arch ?? (process.arch === "arm64" ? "aarch64" : "x86_64"), python, glibc },
    driverCuda,
    knownCapabilities: remote ? await knownCapabilities() : [],
  };
  return { device, target };
}

export const scanCommand = defineCommand({
  name: "scan",
  title: "which GPU architectures the CUDA code in binaries covers",
  positionals: "FILE|DIR|WHEEL|URL|IMAGE...",
  usage: [
    ["FILE|DIR...", ".so / .o / .a files, directories searched recursively"],
    ["WHEEL|URL", "a .whl file or an http(s) URL of one: read from the zip, not installed"],
    ["IMAGE", "a `docker save` .tar, an OCI layout directory, or docker://REGISTRY/NAME:TAG"],
    ["--lock FILE", "every wheel a uv.lock / pylock.toml / requirements file installs"],
    ["--index URL --package SPEC", "the wheel an installer picks from an index"],
    ["--python PATH", "every binary in that interpreter's site-packages"],
  ],
  options: OPTIONS,
  outro: `verdicts: native (a SASS cubin runs), ptx-jit (the driver compiles PTX at first load; slow
first run), none (cannot run: "no kernel image is available for execution on the device").
Only URLs given on the command line, or named by --lock / --index / --find-links, are fetched:
over HTTP Range requests where the server has them (the zip's directory, then only its shared
libraries), else once front to back; nothing is written to disk or installed.
exit status: 0 every library with CUDA code can run on the GPU, 1 some cannot (or a wheel's
variant label contradicts its binaries), 2 error, also when no file examined could be read`,
  examples: [
    ["gpuprep scan --python .venv/bin/python", "every binary that venv imports, judged for the local GPU"],
    [
      "gpuprep scan https://example.org/x-1.0-cp312-cp312-manylinux_2_28_x86_64.whl --gpu sm_121",
      "a wheel, before installing it",
    ],
    ["gpuprep scan --lock uv.lock --target dgx-spark", "every wheel the lock would install on a DGX Spark"],
    [
      "gpuprep scan docker://127.0.0.1:5000/team/app:v1 --target dgx-spark",
      "an image in a registry, without pulling it",
    ],
  ],
  async run({ values, positionals }) {
    const packages = values.package ?? [];
    const hasIndex = (values.index ?? []).length > 0 || (values["find-links"] ?? []).length > 0;
    if (
      positionals.length === 0 &&
      values.python === undefined &&
      values.lock === undefined &&
      packages.length === 0
    )
      throw new UserError(
        "scan: nothing to scan",
        "give files, directories, wheels or images, --lock FILE, --package SPEC with --index URL, or --python PATH",
      );
    if (packages.length > 0 && !hasIndex)
      throw new UserError(
        "scan: --package needs --index URL or --find-links DIR",
        "name where to pick it from",
      );
    if (hasIndex && packages.length === 0)
      throw new UserError("scan: --index and --find-links pick a --package", "add --package NAME==VERSION");
    const inputs = positionals.map(classifyInput);
    for (const input of inputs) {
      if (input.kind === "files" && !(await stat(input.path).catch(() => null)))
        throw new UserError(
          `scan: cannot read ${input.path}`,
          "check the path; directories are searched recursively",
        );
      if (
        input.kind === "wheel" &&
        !/^https?:/i.test(input.location) &&
        !(await stat(input.location).catch(() => null))
      )
        throw new UserError(`scan: cannot read ${input.location}`, "check the path of the wheel");
    }
    if (values.lock !== undefined && !(await stat(values.lock).catch(() => null)))
      throw new UserError(`scan: cannot read ${values.lock}`, "check the path of the lock file");
    if (values.gpu !== undefined && values.from !== undefined)
      throw new UserError("scan: --gpu and --from both name the GPU", "give one of them");
    if (values.target !== undefined && (values.gpu !== undefined || values.from !== undefined))
      throw new UserError("scan: --target and --gpu/--from both name the GPU", "give one of them");
    const remote = inputs.some((i) => i.kind !== "files") || values.lock !== undefined || packages.length > 0;
    const timeout = positiveNumber(values.timeout, "--timeout");
    const maxBytes = positiveNumber(values["max-bytes"], "--max-bytes");
    // The readers of remote inputs (HTTP, zip, tar) load only when asked for: a plain scan's start-up
    // is measured against cuobjdump (docs/benchmarks.md).
    const reader = remote ? await import("./scan-remote.js") : null;
    const client = reader?.httpClient(timeout, maxBytes) ?? null;
    // Where the interpreter and nvidia-smi run; scan reads the files on this machine, so here.
    const transport = localTransport(values.python ?? "python3");
    const roots = [
      ...inputs.flatMap((i) => (i.kind === "files" ? [i.path] : [])),
      ...(values.python !== undefined ? await sitePackages(transport) : []),
    ];
    // A GPU named on the command line or in a snapshot is checked before any reading;
    // nvidia-smi (tens of ms or more) runs while the files are read.
    const flagged =
      values.gpu !== undefined
        ? await deviceFromFlag(values.gpu)
        : values.from !== undefined
          ? await deviceFromSnapshot(values.from)
          : null;
    const { device: chosen, target } = await scanTarget(values, flagged, remote);
    const local =
      chosen === null
        ? gatherGpuList(transport).then((nvidia) => deviceFromGpus(nvidia, "local"))
        : Promise.resolve(null);

    const progress = startProgress("scan", "finding binaries");
    let scans: FileScan[] = [];
    let files: string[] = [];
    const result = newResult();
    try {
      if (roots.length > 0) {
        files = await findBinaries(roots);
        scans = await scanFiles(files, {
          onProgress: ({ done, total }) => progress.update(`${done}/${total} files`),
        });
      }
      // Judged for the named target; a local GPU is only known once nvidia-smi answers.
      const remoteTarget = { ...target, capability: target.capability ?? (await local)?.capability ?? null };
      if (reader && client) {
        for (const input of inputs) {
          if (input.kind === "wheel") {
            progress.update(`wheel ${input.location}`);
            await reader.scanWheelInput(result, input.location, remoteTarget, client);
          } else if (input.kind === "image") {
            await reader.scanImageInput(result, input.ref, remoteTarget, client, (i, n) =>
              progress.update(`${input.ref}: layer ${i + 1}/${n}`),
            );
          }
        }
        if (values.lock !== undefined)
          await reader.scanLockInput(
            result,
            values.lock,
            remoteTarget,
            values.offline ? null : client,
            (done, total, name) => progress.update(`${done}/${total} wheels (${name})`),
          );
        for (const spec of packages)
          await reader.scanIndexInput(
            result,
            spec,
            values.index ?? [],
            values["find-links"] ?? [],
            remoteTarget,
            client,
          );
      }
    } finally {
      progress.end(); // gone before the report (or an error) is printed
    }
    const device = chosen ?? (await local);
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
    const libraries = [...reports, ...result.libraries];
    const examined = files.length + result.filesExamined;
    const cannotRun = libraries.some((r) => r.verdict?.how === "none");
    const mismatch = result.findings.some((f) => f.severity === "error");
    if (values.json) {
      writeDocument(
        renderJsonDocument(SCAN_SCHEMA, SCAN_SCHEMA_VERSION, {
          device: device
            ? { label: device.label, computeCapability: formatComputeCapability(device.capability) }
            : null,
          filesExamined: examined,
          libraries,
          ...(remote
            ? {
                target: {
                  ...target.platform,
                  glibc: target.platform.glibc.join("."),
                  driverCuda: target.driverCuda,
                },
                packages: result.packages,
                sources: result.sources,
                findings: result.findings,
              }
            : {}),
        }),
      );
    } else {
      writeText(
        renderScanText(
          {
            reports: libraries,
            device,
            examined,
            packages: result.packages,
            sources: result.sources,
            findings: result.findings,
          },
          makeStyle(useColor()),
        ),
      );
    }
    // Nothing readable means nothing was checked: not a clean result (issue 12).
    const everything = [...scans, ...result.libraries];
    if (examined > 0 && everything.length > 0 && everything.every((s) => s.error !== null))
      return EXIT_TOOL_ERROR;
    if (result.packages.length > 0 && result.packages.every((p) => p.error !== null)) return EXIT_TOOL_ERROR;
    return cannotRun || mismatch ? EXIT_FINDINGS : EXIT_OK;
  },
});
