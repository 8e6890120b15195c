/** `gpuprep scan`: which GPU architectures the CUDA code in binaries covers, and what a GPU can run. */
import { writeDocument, writeText } from "../report/terminal.js";
import { renderScanText } from "../report/scan-text.js";
import { renderJsonDocument } from "../report/envelope.js";
import { SCAN_SCHEMA, SCAN_SCHEMA_VERSION } from "../report/document-ids.js";
import { importDirectories } from "../gather/binaries.js";
import { gatherGpuList } from "../gather/gpus.js";
import { localTransport } from "../transports/local.js";
import type { Transport } from "../transports/types.js";
import { stat } from "node:fs/promises";
import { UserError, errorMessage } from "../errors.js";
import { EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, defineCommand, type OptionTable } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { startProgress } from "../util/console-status.js";
import { formatComputeCapability } from "../kb/compat.js";
import type { CpuArch } from "../remote/wheel-tags.js";
import { classifyInput, readsRemote, type ScanInput, type ScanTarget } from "../remote/scan-inputs.js";
import type { ScanDevice as Device } from "../remote/scan-result.js";
import { scanPaths, type ScanOutcome, type ScanRequest } from "../scan/scan.js";
import {
  deviceFromFlag,
  deviceFromGpus,
  deviceFromSnapshot,
  knownCapabilities,
  targetFromName,
} from "../scan/device.js";

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

/** What to scan, refused when nothing is named or --package and --index / --find-links lack each other. */
function checkWhatToScan(values: Values, positionals: string[]): void {
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
}

/** The command line's files, wheels and images, each path checked before anything is read. */
async function readableInputs(positionals: string[], lock: string | undefined): Promise<ScanInput[]> {
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
  if (lock !== undefined && !(await stat(lock).catch(() => null)))
    throw new UserError(`scan: cannot read ${lock}`, "check the path of the lock file");
  return inputs;
}

/** --gpu, --from and --target each name the GPU: at most one of them. */
function checkOneGpuNamed(values: Values): void {
  if (values.gpu !== undefined && values.from !== undefined)
    throw new UserError("scan: --gpu and --from both name the GPU", "give one of them");
  if (values.target !== undefined && (values.gpu !== undefined || values.from !== undefined))
    throw new UserError("scan: --target and --gpu/--from both name the GPU", "give one of them");
}

/** The GPU named by --gpu or --from (--target's is read in scanTarget), else null. */
async function namedDevice(values: Values): Promise<Device | null> {
  if (values.gpu !== undefined) return deviceFromFlag(values.gpu);
  if (values.from !== undefined) return deviceFromSnapshot(values.from);
  return null;
}

/** The flags checked and parsed into what the core reads, the GPU included. */
async function scanRequest(values: Values, positionals: string[]): Promise<ScanRequest> {
  checkWhatToScan(values, positionals);
  const inputs = await readableInputs(positionals, values.lock);
  checkOneGpuNamed(values);
  const packages = values.package ?? [];
  const lock = values.lock ?? null;
  const remote = readsRemote({ inputs, lock, packages });
  const timeoutSeconds = positiveNumber(values.timeout, "--timeout");
  const maxBytes = positiveNumber(values["max-bytes"], "--max-bytes");
  // Where the interpreter and nvidia-smi run; scan reads the files on this machine, so here.
  const transport = localTransport(values.python ?? "python3");
  const roots = [
    ...inputs.flatMap((i) => (i.kind === "files" ? [i.path] : [])),
    ...(values.python !== undefined ? await sitePackages(transport) : []),
  ];
  // A GPU named on the command line or in a snapshot is checked before any reading;
  // nvidia-smi (tens of ms or more) runs while the files are read.
  const { device: chosen, target } = await scanTarget(values, await namedDevice(values), remote);
  const device =
    chosen === null
      ? gatherGpuList(transport).then((nvidia) => deviceFromGpus(nvidia, "local"))
      : Promise.resolve(chosen);
  return {
    roots,
    inputs,
    lock,
    offline: values.offline === true,
    packages,
    indexes: values.index ?? [],
    findLinks: values["find-links"] ?? [],
    target,
    device,
    named: new Set(positionals),
    all: values.all === true,
    timeoutSeconds,
    maxBytes,
  };
}

function writeScanReport(outcome: ScanOutcome, request: ScanRequest, json: boolean): void {
  if (!json) {
    const { libraries: reports, device, filesExamined: examined, packages, sources, findings } = outcome;
    writeText(
      renderScanText({ reports, device, examined, packages, sources, findings }, makeStyle(useColor())),
    );
    return;
  }
  const { target } = request;
  const remote = readsRemote(request)
    ? {
        target: { ...target.platform, glibc: target.platform.glibc.join("."), driverCuda: target.driverCuda },
        packages: outcome.packages,
        sources: outcome.sources,
        findings: outcome.findings,
      }
    : {};
  writeDocument(
    renderJsonDocument(SCAN_SCHEMA, SCAN_SCHEMA_VERSION, {
      device: outcome.device
        ? {
            label: outcome.device.label,
            computeCapability: formatComputeCapability(outcome.device.capability),
          }
        : null,
      filesExamined: outcome.filesExamined,
      libraries: outcome.libraries,
      ...remote,
    }),
  );
}

function scanExitCode(outcome: ScanOutcome): number {
  // Nothing readable means nothing was checked: not a clean result (issue 12).
  if (outcome.nothingReadable) return EXIT_TOOL_ERROR;
  if (outcome.packages.length > 0 && outcome.packages.every((p) => p.error !== null)) return EXIT_TOOL_ERROR;
  const cannotRun = outcome.libraries.some((r) => r.verdict?.how === "none");
  const mismatch = outcome.findings.some((f) => f.severity === "error");
  return cannotRun || mismatch ? EXIT_FINDINGS : EXIT_OK;
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
    const request = await scanRequest(values, positionals);
    const progress = startProgress("scan", "finding binaries");
    let outcome: ScanOutcome;
    try {
      outcome = await scanPaths(request, (text) => progress.update(text));
    } finally {
      progress.end(); // gone before the report (or an error) is printed
    }
    writeScanReport(outcome, request, values.json === true);
    return scanExitCode(outcome);
  },
});
