/** `gpuprep kb …`: the compatibility knowledge itself, readable with reasons and sources, or --json. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";
import { parseCommandArgs } from "./args.js";
import { makeStyle, useColor, type Style } from "../report/style.js";
import { KnowledgeBase, loadKnowledgeBase } from "../kb/index.js";
import { compactName } from "../kb/queries/gpu.js";
import { defaultOverlayPath, writeOverlay } from "../kb/overlay.js";
import { DEFAULT_INDEX_URL, fetchTorchIndex } from "../kb/update.js";
import type { GpuRow, NgcImageRow, Source } from "../kb/types.js";
import { majorMinor } from "../util/version.js";
import { renderJsonDocument } from "../report/envelope.js";

const KB_SCHEMA = "gpuprep.kb";
const KB_SCHEMA_VERSION = 1;

const HELP = `gpuprep kb: the compatibility knowledge base

usage:
  gpuprep kb gpu NAME|CC            a GPU by nvidia-smi name, user name ("5070ti") or capability ("12.1")
  gpuprep kb cuda VERSION           a CUDA toolkit: drivers it needs, architectures it compiles
  gpuprep kb torch VERSION          the builds of a PyTorch release: variants, arch lists, Pythons
  gpuprep kb ngc TAG                an NGC PyTorch image (e.g. 25.01)
  gpuprep kb ext NAME               an extension package (flash-attn, xformers, ...)
  gpuprep kb resolve --gpu NAME --driver VER [--arch x86_64|aarch64] [--python 3.12]
                                    which PyTorch builds and NGC images run there, best first
  gpuprep kb update [--index-url URL]
                                    refresh torch builds from the PyTorch wheel index into
                                    ~/.cache/gpuprep/kb-overlay.json (never the packaged data)

flags:
  --json    machine-readable output`;

type Print = (line?: string) => void;

export const kbCommand: Command = {
  name: "kb",
  summary: "the compatibility knowledge: GPUs, CUDA, PyTorch builds, NGC images",
  help: HELP,
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
    const print: Print = (line = "") => console.log(line);
    const style = makeStyle(useColor());
    const json = values.json === true;
    if (!topic)
      throw new UserError(
        "kb: which topic?",
        "gpuprep kb gpu|cuda|torch|ngc|ext|resolve|update (see --help)",
      );
    if (extra.length > 0)
      throw new UserError(`kb ${topic}: unexpected argument "${extra[0]}"`, "quote names with spaces");
    if (topic === "update") return update(values["index-url"] ?? DEFAULT_INDEX_URL, json, print);
    const kb = loadKnowledgeBase();
    if (topic === "resolve") return resolve(kb, values, json, print, style);
    if (!subject)
      throw new UserError(
        `kb ${topic}: missing the name or version`,
        `e.g. gpuprep kb ${topic} ${EXAMPLES[topic] ?? ""}`,
      );
    switch (topic) {
      case "gpu":
        return showGpu(kb, subject, json, print, style);
      case "cuda":
        return showCuda(kb, subject, json, print, style);
      case "torch":
        return showTorch(kb, subject, json, print, style);
      case "ngc":
        return showNgc(kb, subject, json, print, style);
      case "ext":
        return showExtension(kb, subject, json, print, style);
      default:
        throw new UserError(
          `kb: unknown topic "${topic}"`,
          "topics: gpu, cuda, torch, ngc, ext, resolve, update",
        );
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
  const fmt = (value: number | null, unit: string) => (value === null ? "unknown" : `${value} ${unit}`);
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
    `  compiles for        ${toolkit.sassTargets ? toolkit.sassTargets.map((sm) => `sm_${sm}`).join(" ") : "not recorded"}`,
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
      `  ${build.variant.padEnd(6)} ${build.platform.padEnd(14)} ${(build.archList.join(" ") || "arch list unknown").padEnd(62)} ${style.dim(flags.join(", "))}`,
    );
    print(
      style.dim(
        `         Python ${build.pythons.join(" ")}; numpy ${build.numpyBuildMajor ?? "?"}.x ABI; ${build.indexUrl}`,
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

async function showNgc(
  kb: KnowledgeBase,
  tag: string,
  json: boolean,
  print: Print,
  style: Style,
): Promise<number> {
  const image = kb.ngcImage(tag);
  if (!image) {
    const known = kb.data.ngcImages.map((row) => row.tag).join(", ") || "none";
    throw new UserError(`no NGC PyTorch image "${tag}" in the knowledge base`, `known tags: ${known}`);
  }
  if (emit(json, "ngc", image, print)) return 0;
  print(style.bold(image.image));
  print(
    `  torch ${image.torch}, CUDA ${image.cuda}, driver ${image.minDriverLinux ?? "?"}+, Ubuntu ${image.ubuntu ?? "?"}, Python ${image.python ?? "?"}, numpy ${image.numpy ?? "?"}`,
  );
  print(
    `  arm64 image: ${image.arm64 === null ? "unknown" : image.arm64 ? "yes" : "no"}; GPUs: ${ngcGpuText(image)}`,
  );
  for (const [name, pin] of Object.entries(image.packages)) print(`  ${name} ${pin}`);
  if (image.pipConstraintFile) print(`  pip constraints: ${image.pipConstraintFile}`);
  printSources(print, style, image.sources);
  return 0;
}

function ngcGpuText(image: NgcImageRow): string {
  const parts: string[] = [];
  if (image.gpuArchs.length > 0) parts.push(image.gpuArchs.join(", "));
  if (image.minComputeCapability) parts.push(`compute capability ${image.minComputeCapability} and later`);
  return parts.length > 0 ? parts.join("; ") : "not sourced";
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
    `  GPUs: ${row.supportedComputeCapabilities.join(", ") || "not recorded"}; platforms: ${row.platforms.join(", ") || "not recorded"}; from: ${row.distribution.join(", ")}`,
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
