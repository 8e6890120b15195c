/** `gpuprep kb …`: the compatibility knowledge itself, readable with reasons and sources, or --json. */
import { writeText } from "../report/terminal.js";
import { UserError } from "../errors.js";
import type { Command } from "./command.js";
import { parseCommandArgs } from "./args.js";
import { makeStyle, useColor, type Style } from "../report/style.js";
import { KnowledgeBase, loadKnowledgeBase } from "../kb/index.js";
import { compactName } from "../kb/queries/gpu.js";
import { defaultOverlayPath, writeOverlay } from "../kb/overlay.js";
import { DEFAULT_INDEX_URL, fetchTorchIndex } from "../kb/update.js";
import { ngcDriverFloor } from "../kb/queries/ngc.js";
import type { GpuRow, NgcImageRow, Source } from "../kb/types.js";
import { majorMinor } from "../util/version.js";
import { renderJsonDocument } from "../report/envelope.js";
import { KB_SCHEMA, KB_SCHEMA_VERSION } from "../report/document-ids.js";

/** Every KB value that is missing prints as this: the KB records only what a source states. */
const NOT_SOURCED = "not sourced";

const HELP = `gpuprep kb: the compatibility knowledge base

usage:
  gpuprep kb gpu NAME|CC            a GPU by nvidia-smi name, user name ("5070ti") or capability ("12.1")
  gpuprep kb cuda VERSION           a CUDA toolkit: drivers it needs, architectures it compiles
  gpuprep kb torch VERSION          the builds of a PyTorch release: variants, arch lists, Pythons
  gpuprep kb ngc [TAG]              an NGC PyTorch image (e.g. 25.01): torch, CUDA, driver floor,
                                    platforms, the GPUs it covers and the runs behind them;
                                    without TAG, every image in the knowledge base
  gpuprep kb ext NAME               an extension package (flash-attn, xformers, ...)
  gpuprep kb resolve --gpu NAME --driver VER [--arch x86_64|aarch64] [--python 3.12]
                                    which PyTorch builds and NGC images run there, best first
  gpuprep kb update [--index-url URL]
                                    refresh torch builds from the PyTorch wheel index into
                                    ~/.cache/gpuprep/kb-overlay.json (never the packaged data)

flags:
  --json    machine-readable output`;

type Print = (line?: string) => void;

const KB_SUBJECTS = ["gpu", "cuda", "torch", "ngc", "ext", "resolve", "update"];

export const kbCommand: Command = {
  name: "kb",
  summary: "the compatibility knowledge: GPUs, CUDA, PyTorch builds, NGC images",
  help: HELP,
  examples: [
    ["gpuprep kb gpu 5070ti", "a GPU: capability, memory, peaks, driver floor"],
    ["gpuprep kb ngc 25.01", "an NGC PyTorch image and the GPUs it covers"],
    [
      'gpuprep kb resolve --gpu "NVIDIA GB10" --driver 580.95.05',
      "the torch builds and images that run there",
    ],
  ],
  async run(argv) {
    const { values, positionals } = parseCommandArgs("kb", {
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        gpu: { type: "string" },
        driver: { type: "string" },
        arch: { type: "string" },
        python: { type: "string" },
        "index-url": { type: "string" },
      },
    });
    const [topic, subject, ...extra] = positionals;
    const json = values.json === true;
    // kb text shows overlay files' contents too: sanitized like every text report (JSON is escaped).
    const print: Print = json ? (line = "") => console.log(line) : (line = "") => writeText(`${line}\n`);
    const style = makeStyle(useColor());
    if (!topic)
      throw new UserError(
        "kb: which topic?",
        "gpuprep kb gpu|cuda|torch|ngc|ext|resolve|update (see --help)",
      );
    // Named before anything else: `kb foo` is an unknown subject, not a missing name.
    if (!KB_SUBJECTS.includes(topic))
      throw new UserError(`unknown kb subject '${topic}'`, `subjects: ${KB_SUBJECTS.join(", ")}`);
    if (extra.length > 0)
      throw new UserError(`kb ${topic}: unexpected argument "${extra[0]}"`, "quote names with spaces");
    if (topic === "update") return update(values["index-url"] ?? DEFAULT_INDEX_URL, json, print);
    const kb = loadKnowledgeBase();
    if (topic === "resolve") return resolve(kb, values, json, print, style);
    if (!subject && topic !== "ngc")
      throw new UserError(
        `kb ${topic}: missing the name or version`,
        `e.g. gpuprep kb ${topic} ${EXAMPLES[topic] ?? ""}`,
      );
    switch (topic) {
      case "gpu":
        return showGpu(kb, subject!, json, print, style);
      case "cuda":
        return showCuda(kb, subject!, json, print, style);
      case "torch":
        return showTorch(kb, subject!, json, print, style);
      case "ngc":
        return showNgc(kb, subject, json, print, style);
      default: // "ext", the one subject left after the checks above
        return showExtension(kb, subject!, json, print, style);
    }
  },
};

const EXAMPLES: Record<string, string> = {
  gpu: '"NVIDIA GB10"',
  cuda: "12.8",
  torch: "2.11",
  ngc: "25.01",
  ext: "flash-attn",
};

function printSources(print: Print, style: Style, sources: Source[]): void {
  print(style.dim("sources:"));
  for (const source of sources) print(style.dim(`  ${source.url}${source.note ? ` (${source.note})` : ""}`));
}

/** Under --json every topic prints one enveloped document: { schema, schemaVersion, tool, topic, result }. */
function emit(json: boolean, topic: string, value: unknown, print: Print): boolean {
  if (json) print(renderJsonDocument(KB_SCHEMA, KB_SCHEMA_VERSION, { topic, result: value }).trimEnd());
  return json;
}

export function requireGpu(kb: KnowledgeBase, name: string): GpuRow {
  const { match, candidates } = kb.resolveGpu(name);
  if (match) return match;
  const hint =
    candidates.length > 0
      ? `closest: ${candidates.map((row) => row.name).join(", ")}`
      : `try a capability ("9.0", "sm_120") or one of: ${kb.data.gpus
          .slice(0, 6)
          .map((row) => compactName(row.name))
          .join(", ")} …`;
  throw new UserError(`unknown GPU "${name}"`, hint);
}

async function showGpu(
  kb: KnowledgeBase,
  name: string,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  const gpu = requireGpu(kb, name);
  const arch = kb.arch(gpu.computeCapability);
  if (emit(json, "gpu", { gpu, arch }, print)) return 0;
  const peak = gpu.peakTflops;
  const fmt = (value: number | null, unit: string) => (value === null ? NOT_SOURCED : `${value} ${unit}`);
  print(style.bold(gpu.name));
  print(
    `  compute capability  ${gpu.computeCapability} (sm_${gpu.computeCapability.replace(".", "")}), ${gpu.architecture}`,
  );
  print(
    `  memory              ${fmt(gpu.memoryGB, "GB")} ${gpu.memoryType ?? ""}, ${fmt(gpu.memoryBandwidthGBs, "GB/s")}`,
  );
  print(
    `  dense peaks         BF16 ${fmt(peak.bf16, "TFLOP/s")}, FP16 ${fmt(peak.fp16, "TFLOP/s")}, TF32 ${fmt(peak.tf32, "TFLOP/s")}, FP32 ${fmt(peak.fp32, "TFLOP/s")}`,
  );
  if (gpu.hostCpuArch)
    print(
      `  host CPU            ${gpu.hostCpuArch}${gpu.unifiedMemory ? ", CPU and GPU share one coherent memory" : ""}`,
    );
  if (gpu.minDriverLinux) print(`  needs driver        ${gpu.minDriverLinux} or newer`);
  if (gpu.aliases.length > 0) print(style.dim(`  also known as       ${gpu.aliases.join(", ")}`));
  printSources(print, style, gpu.sources);
  return 0;
}

async function showCuda(
  kb: KnowledgeBase,
  version: string,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  const toolkit = kb.cudaToolkit(version);
  if (!toolkit)
    throw new UserError(
      `no CUDA ${version} in the knowledge base`,
      `known: ${kb.data.cudaToolkits.map((row) => row.version).join(", ")}`,
    );
  if (emit(json, "cuda", toolkit, print)) return 0;
  print(style.bold(`CUDA ${toolkit.version}`));
  print(`  driver (Linux)      ${toolkit.minDriverLinux} or newer runs it natively`);
  if (toolkit.minorCompatMinDriverLinux)
    print(
      `  minor-version compat from ${toolkit.minorCompatMinDriverLinux} (runs, but cannot JIT PTX newer than the driver)`,
    );
  print(
    `  compiles for        ${toolkit.sassTargets ? toolkit.sassTargets.map((sm) => `sm_${sm}`).join(" ") : NOT_SOURCED}`,
  );
  if (toolkit.ptxIsa) print(`  PTX ISA             ${toolkit.ptxIsa}`);
  printSources(print, style, toolkit.sources);
  return 0;
}

async function showTorch(
  kb: KnowledgeBase,
  version: string,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  const builds = kb.torchBuildsForVersion(version);
  if (builds.length === 0) {
    const known = [...new Set(kb.data.torchBuilds.map((row) => row.torch))].join(", ");
    throw new UserError(
      `no PyTorch ${majorMinor(version)} builds in the knowledge base`,
      `known releases: ${known}; \`gpuprep kb update\` refreshes from the wheel index`,
    );
  }
  if (emit(json, "torch", builds, print)) return 0;
  print(style.bold(`PyTorch ${majorMinor(version)}`));
  for (const build of builds) {
    const flags = [
      build.pypiDefault ? "PyPI default" : "",
      build.ptxUnverified ? "PTX not verified" : "",
      build.confidence,
    ].filter(Boolean);
    print(
      `  ${build.variant.padEnd(6)} ${build.platform.padEnd(14)} ${(build.archList.join(" ") || `arch list ${NOT_SOURCED}`).padEnd(62)} ${style.dim(flags.join(", "))}`,
    );
    print(
      style.dim(
        `         Python ${build.pythons.join(" ")}; numpy ${build.numpyBuildMajor === null ? `ABI ${NOT_SOURCED}` : `${build.numpyBuildMajor}.x ABI`}; ${build.indexUrl}`,
      ),
    );
  }
  const seen = new Set<string>();
  for (const build of builds)
    for (const source of build.sources) if (!seen.has(source.url)) seen.add(source.url);
  printSources(
    print,
    style,
    [...seen].map((url) => ({ url })),
  );
  return 0;
}

function yesNo(value: boolean | null): string {
  return value === null ? NOT_SOURCED : value ? "yes" : "no";
}

async function showNgc(
  kb: KnowledgeBase,
  tag: string | undefined,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  if (tag === undefined) return listNgc(kb, json, print, style);
  const image = kb.ngcImage(tag);
  if (!image) {
    const known = kb.data.ngcImages.map((row) => row.tag).join(", ") || "none";
    throw new UserError(
      `no NGC PyTorch image "${tag}" in the knowledge base`,
      `known tags: ${known} (tags left out, and why: docs/knowledge-base.md)`,
    );
  }
  const covers = kb.ngcCoverage(image);
  if (emit(json, "ngc", { ...image, covers }, print)) return 0;
  const field = (name: string, value: string) => print(`  ${name.padEnd(16)}${value}`);
  print(`${style.bold(image.image)}  ${style.dim(image.confidence)}`);
  field(
    "torch",
    `${image.torch} ${style.dim(image.torchAsPrinted ? "(as torch.__version__ prints it)" : "(release-notes form; what torch.__version__ prints is not sourced)")}`,
  );
  field("CUDA", image.cuda);
  field("driver", ngcDriverText(kb, image));
  field("Ubuntu", image.ubuntu ?? NOT_SOURCED);
  field("Python", image.python ?? NOT_SOURCED);
  field("numpy", image.numpy ?? NOT_SOURCED);
  field(
    "platforms",
    `linux/amd64: ${yesNo(image.platforms.amd64)}; linux/arm64: ${yesNo(image.platforms.arm64)}; Jetson -igpu tag: ${yesNo(image.platforms.igpu)}`,
  );
  field(
    "GPU floor",
    image.gpus.minComputeCapability
      ? `compute capability ${image.gpus.minComputeCapability} and later (NVIDIA)`
      : `${NOT_SOURCED} (NVIDIA's GPU requirement for ${image.tag} was not read)`,
  );
  field(
    "exceptions",
    image.gpus.exceptions.length > 0
      ? image.gpus.exceptions.map((entry) => `${entry.computeCapability}: ${entry.note}`).join("; ")
      : "none known",
  );
  if (image.gpus.runs.length === 0) field("runs", "none recorded");
  for (const [i, run] of image.gpus.runs.entries())
    field(
      i === 0 ? "runs" : "",
      `${run.computeCapability} ${run.gpu}, ${run.cpuArch ?? "CPU not stated"}${run.cpuArchBasis === "assumed" ? " (not stated, taken as x86_64)" : ""}: ${run.result} ${style.dim(`(${run.what})`)}`,
    );
  for (const cpuArch of ["x86_64", "aarch64"] as const) {
    const list = covers[cpuArch];
    field(
      cpuArch === "x86_64" ? "covers" : "",
      `${cpuArch}: ${list.length > 0 ? list.map((entry) => `${entry.computeCapability}${entry.rule === "stated-floor" ? " (NVIDIA's floor)" : ""}`).join(", ") : "none known"}`,
    );
  }
  field(
    "packages",
    Object.entries(image.packages)
      .map(([name, pin]) => `${name} ${pin}`)
      .join(", ") || NOT_SOURCED,
  );
  field("pip constraints", image.pipConstraintFile ?? NOT_SOURCED);
  printSources(print, style, image.sources);
  return 0;
}

function ngcDriverText(kb: KnowledgeBase, image: NgcImageRow): string {
  const toolkit = kb.cudaToolkit(image.cuda) ?? undefined;
  const floor = ngcDriverFloor(image, toolkit);
  if (!floor) return NOT_SOURCED;
  const native =
    toolkit && toolkit.minDriverLinux !== floor.floor
      ? `; CUDA ${toolkit.version} runs natively from ${toolkit.minDriverLinux}`
      : "";
  return `${floor.floor} or newer (${floor.basis}${native})`;
}

async function listNgc(kb: KnowledgeBase, json: boolean, print: Print, style: Style): Promise<number> {
  const rows = [...kb.data.ngcImages].sort((a, b) => (a.tag < b.tag ? -1 : 1));
  if (emit(json, "ngc", rows, print)) return 0;
  print(style.bold("NGC PyTorch images (gpuprep kb ngc TAG for one, with its sources)"));
  for (const image of rows) {
    const covers = kb.ngcCoverage(image);
    const text = (["x86_64", "aarch64"] as const)
      .map(
        (cpuArch) => `${cpuArch} ${covers[cpuArch].map((entry) => entry.computeCapability).join(" ") || "-"}`,
      )
      .join("; ");
    print(
      `  ${image.tag}  torch ${image.torch.padEnd(38)} CUDA ${image.cuda.padEnd(9)} driver ${(image.minDriverLinux ?? NOT_SOURCED).padEnd(10)} ${style.dim(`covers ${text}`)}`,
    );
  }
  return 0;
}

async function showExtension(
  kb: KnowledgeBase,
  name: string,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  const row = kb.extension(name);
  if (!row) {
    const known = kb.data.extensions.map((entry) => entry.name).join(", ") || "none";
    throw new UserError(`no extension "${name}" in the knowledge base`, `known: ${known}`);
  }
  if (emit(json, "ext", row, print)) return 0;
  print(style.bold(row.name));
  print(`  ${row.summary}`);
  print(
    `  GPUs: ${row.supportedComputeCapabilities.join(", ") || NOT_SOURCED}; platforms: ${row.platforms.join(", ") || NOT_SOURCED}; from: ${row.distribution.join(", ")}`,
  );
  if (row.buildFromSourceFor.length > 0)
    print(`  build from source for: ${row.buildFromSourceFor.join(", ")}`);
  if (row.torchPins) print(`  torch: ${row.torchPins}`);
  for (const note of row.notes) print(`  - ${note}`);
  if (row.builds && row.builds.length > 0) {
    print(style.bold("builds:"));
    for (const build of row.builds) {
      const cuda = build.cuda ? ` CUDA ${build.cuda}` : "";
      const torch = build.torch ? ` torch ${build.torch}` : "";
      const targets =
        build.targets.length > 0 ? build.targets.join(" ") : "no GPU code (compiled at run time)";
      print(`  ${build.version}${cuda}${torch} [${build.platforms.join(", ")}]: ${targets}`);
    }
  }
  printSources(print, style, row.sources);
  return 0;
}

interface ResolveFlags {
  gpu?: string | undefined;
  driver?: string | undefined;
  arch?: string | undefined;
  python?: string | undefined;
}

async function resolve(
  kb: KnowledgeBase,
  flags: ResolveFlags,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  if (!flags.gpu)
    throw new UserError(
      "kb resolve: --gpu is required",
      'e.g. gpuprep kb resolve --gpu "NVIDIA GB10" --driver 580.95.05',
    );
  if (!flags.driver || !/^\d+(\.\d+)*$/.test(flags.driver))
    throw new UserError(
      "kb resolve: --driver needs a driver version like 580.95.05",
      "nvidia-smi prints it as 'Driver Version'",
    );
  const gpu = requireGpu(kb, flags.gpu);
  const arch = flags.arch ?? gpu.hostCpuArch ?? "x86_64";
  if (arch !== "x86_64" && arch !== "aarch64")
    throw new UserError(`kb resolve: --arch must be x86_64 or aarch64, not "${arch}"`, "uname -m prints it");
  if (flags.python && !/^3\.\d+(\.\d+)?t?$/.test(flags.python))
    throw new UserError(
      `kb resolve: --python "${flags.python}" is not a Python version`,
      "e.g. --python 3.12",
    );
  const query = {
    computeCapability: gpu.computeCapability,
    driverVersion: flags.driver,
    cpuArch: arch,
    ...(flags.python ? { python: flags.python } : {}),
  } as const;
  const evaluation = kb.evaluateTorchBuilds(query);
  const images = kb.judgeNgcImages(query);
  if (emit(json, "resolve", { gpu, query, torch: evaluation, ngc: images }, print)) return 0;
  print(
    style.bold(
      `${gpu.name} (${gpu.computeCapability}), driver ${flags.driver}, ${arch}${flags.python ? `, Python ${flags.python}` : ""}`,
    ),
  );
  if (kb.driverTooOldForGpu(gpu, flags.driver))
    print(style.red(`  driver ${flags.driver} predates this GPU: it needs ${gpu.minDriverLinux} or newer`));
  print("");
  print(style.bold("PyTorch builds that run here, best first:"));
  if (evaluation.choices.length === 0) print(style.red("  none"));
  for (const choice of evaluation.choices.slice(0, 8)) {
    print(`  ${style.green(`torch ${choice.build.torch} ${choice.build.variant}`)}  ${choice.pip}`);
    print(style.dim(`      uv: ${choice.uv}`));
    for (const reason of choice.reasons) print(style.dim(`      ${reason}`));
  }
  if (evaluation.rejected.length > 0) {
    print("");
    print(style.bold("Turned down:"));
    for (const entry of evaluation.rejected.slice(-8).reverse())
      print(style.dim(`  torch ${entry.build.torch} ${entry.build.variant}: ${entry.reason}`));
  }
  const running = images.filter((verdict) => verdict.runs);
  print("");
  print(style.bold("NGC PyTorch images that run here, newest first:"));
  if (running.length === 0)
    print(style.dim(kb.data.ngcImages.length === 0 ? "  (no NGC images in the knowledge base)" : "  none"));
  for (const verdict of running.slice(0, 5)) print(`  ${verdict.image.image}  ${style.dim(verdict.reason)}`);
  return 0;
}

async function update(indexUrl: string, json: boolean, print: Print): Promise<number> {
  if (!/^https?:\/\//.test(indexUrl))
    throw new UserError(
      `kb update: --index-url "${indexUrl}" is not a http(s) URL`,
      `the default is ${DEFAULT_INDEX_URL}`,
    );
  const overlay = await fetchTorchIndex(indexUrl);
  const path = defaultOverlayPath();
  writeOverlay(overlay, path);
  const summary = {
    overlay: path,
    indexUrl,
    builds: overlay.torchBuilds.length,
    releases: [...new Set(overlay.torchBuilds.map((row) => row.torch))],
  };
  if (!emit(json, "update", summary, print))
    print(
      `wrote ${summary.builds} torch builds (releases ${summary.releases.join(", ")}) from ${indexUrl} to ${path}`,
    );
  return 0;
}
