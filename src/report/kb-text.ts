/**
 * `gpuprep kb`'s text: each topic's rows with reasons and sources. A value the knowledge base
 * does not have prints as "not sourced": it records only what a source states.
 */
import { formatDriverVersion } from "../vocabulary/driver-version.js";
import type { Style } from "./style.js";
import type {
  GpuDriverFloor,
  KnowledgeBase,
  NgcImageVerdict,
  NgcPlatform,
  NgcRunsOnEntry,
  PackageRequirementsAnswer,
  TorchBuildEvaluation,
  TorchBuildQuery,
} from "../kb/index.js";
import { ngcDriverFloor } from "../kb/queries/ngc.js";
import { sourceText } from "../kb/source-label.js";
import type {
  CudaToolkitRow,
  ExtensionRow,
  GpuRow,
  PrecisionPeak,
  NgcArchList,
  NgcImageRow,
  Source,
  TorchBuildRow,
} from "../kb/types.js";
import { majorMinor } from "../util/version.js";

/** Every KB value that is missing prints as this. */
const NOT_SOURCED = "not sourced";

type Print = (line?: string) => void;

/** Lines and the function that adds one, for the renderers below. */
function collector(): { lines: string[]; print: Print } {
  const lines: string[] = [];
  return { lines, print: (line = "") => void lines.push(line) };
}

function text(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join("");
}

/** `kb update`'s one line. */
export function renderKbUpdate(summary: {
  builds: number;
  releases: string[];
  indexUrl: string;
  overlay: string;
}): string {
  return `wrote ${summary.builds} torch builds (releases ${summary.releases.join(", ")}) from ${summary.indexUrl} to ${summary.overlay}\n`;
}

/** What `kb gpu` shows beyond the row: the rows a shared name stands for, and the driver floor. */
interface KbGpuExtras {
  variants: GpuRow[];
  driverFloor: GpuDriverFloor;
}

function driverFloorText(floor: GpuDriverFloor): string {
  if (!floor.minDriverLinux)
    return floor.basis === "jetpack" ? "comes with JetPack (a Jetson part)" : NOT_SOURCED;
  const last = floor.lastDriverBranch ? `, up to the R${floor.lastDriverBranch} branch` : "";
  return `${floor.minDriverLinux} or newer${last} (${floor.reason})`;
}

/** One precision's figures as NVIDIA states them: dense, 2:4 sparse, or the one of them it gives. */
function precisionPeakText(format: string, entry: PrecisionPeak | "not-on-arch"): string {
  const name = format.toUpperCase();
  if (entry === "not-on-arch") return `${name} not on this architecture`;
  if (entry.dense !== null && entry.sparse !== null)
    return `${name} ${entry.dense} dense, ${entry.sparse} sparse`;
  if (entry.dense !== null) return `${name} ${entry.dense} dense`;
  if (entry.sparse !== null) return `${name} ${entry.sparse} sparse (dense ${NOT_SOURCED})`;
  return `${name} ${NOT_SOURCED}`;
}

/** The per-precision peaks line; the sources below the row quote each figure. */
function peaksLine(gpu: GpuRow): string | null {
  const entries = Object.entries(gpu.peaks ?? {}).filter(
    (pair): pair is [string, PrecisionPeak | "not-on-arch"] => pair[1] !== undefined,
  );
  if (entries.length === 0) return null;
  const figures = entries.map(([format, entry]) => precisionPeakText(format, entry));
  return `  per precision       ${figures.join("; ")} (TFLOP/s, INT8 TOPS)`;
}

export function renderKbGpu(gpu: GpuRow, style: Style, extras?: KbGpuExtras): string {
  const { lines, print } = collector();
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
  const perPrecision = peaksLine(gpu);
  if (perPrecision) print(perPrecision);
  if (gpu.hostCpuArch)
    print(
      `  host CPU            ${gpu.hostCpuArch}${gpu.unifiedMemory ? ", CPU and GPU share one coherent memory" : ""}`,
    );
  if (extras) print(`  needs driver        ${driverFloorText(extras.driverFloor)}`);
  else if (gpu.minDriverLinux) print(`  needs driver        ${gpu.minDriverLinux} or newer`);
  if (extras && extras.variants.length > 0) {
    print(`  stands for          ${extras.variants.map((row) => row.name).join("; ")}`);
    print(
      style.dim(
        "                      (a name several GPUs share: the smallest memory, peaks only where all agree; name one for its own figures)",
      ),
    );
  }
  if (gpu.aliases.length > 0) print(style.dim(`  also known as       ${gpu.aliases.join(", ")}`));
  const floorSources = extras?.driverFloor.sources.filter(
    (source) => !gpu.sources.some((own) => own.url === source.url),
  );
  printSources(print, style, [...gpu.sources, ...(floorSources ?? [])]);
  return text(lines);
}

export function renderKbCuda(toolkit: CudaToolkitRow, style: Style): string {
  const { lines, print } = collector();
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
  return text(lines);
}

export function renderKbTorch(version: string, builds: TorchBuildRow[], style: Style): string {
  const { lines, print } = collector();
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
  return text(lines);
}

const PLATFORM_LABEL: Record<NgcPlatform, string> = {
  amd64: "linux/amd64",
  arm64: "linux/arm64",
  igpu: "Jetson -igpu",
};

function archListText(list: NgcArchList): string {
  const basis =
    list.basis === "image-env"
      ? `the image's TORCH_CUDA_ARCH_LIST${list.written ? ` "${list.written}"` : ""}`
      : list.basis === "get-arch-list"
        ? "torch's get_arch_list() printed inside the image"
        : "derived";
  const platform = list.platformBasis === "assumed" ? "; the source's CPU is not named, taken as x86_64" : "";
  return `${list.archList.join(" ")} (${basis}${platform})`;
}

function runsOnText(entries: NgcRunsOnEntry[]): string {
  if (entries.length === 0) return "none known";
  const how: Record<NgcRunsOnEntry["how"], string> = {
    sass: "",
    "ptx-jit": " PTX JIT",
    jetpack: " JetPack",
    "run-only": " a first-hand run",
  };
  return entries
    .map((entry) => `${entry.computeCapability}${how[entry.how]}${entry.derived ? "*" : ""}`)
    .join(", ");
}

export function renderKbNgc(
  kb: KnowledgeBase,
  image: NgcImageRow,
  runsOn: ReturnType<KnowledgeBase["ngcRunsOn"]>,
  style: Style,
): string {
  const { lines, print } = collector();
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
  printArchLists(field, style, image);
  for (const platform of ["amd64", "arm64", "igpu"] as const)
    field(
      platform === "amd64" ? "runs on" : "",
      `${PLATFORM_LABEL[platform]}: ${runsOnText(runsOn[platform])}`,
    );
  print(style.dim("                  (compute capabilities, driver aside; * rests on something derived)"));
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
  field(
    "packages",
    Object.entries(image.packages)
      .map(([name, pin]) => `${name} ${pin}`)
      .join(", ") || NOT_SOURCED,
  );
  field("pip constraints", image.pipConstraintFile ?? NOT_SOURCED);
  printSources(print, style, image.sources);
  return text(lines);
}

/** Each platform image's arch list and what it rests on, and the -igpu image's JetPack. */
function printArchLists(
  field: (name: string, value: string) => void,
  style: Style,
  image: NgcImageRow,
): void {
  const lists = image.archLists;
  if (lists.length === 0)
    field("arch lists", `${NOT_SOURCED} (no platform image's list was read or derived)`);
  for (const [i, list] of lists.entries()) {
    field(i === 0 ? "arch lists" : "", `${PLATFORM_LABEL[list.platform]}: ${archListText(list)}`);
    field("", style.dim(`  ${list.note}`));
  }
  if (image.jetson) {
    field(
      "",
      `${PLATFORM_LABEL.igpu}: built for JetPack ${image.jetson.jetpack}, which runs on ${image.jetson.computeCapabilities.join(", ")} (arch list ${NOT_SOURCED})`,
    );
    field("", style.dim(`  ${image.jetson.note}`));
  }
}

export function renderKbNgcList(kb: KnowledgeBase, rows: NgcImageRow[], style: Style): string {
  const { lines, print } = collector();
  print(style.bold("NGC PyTorch images (gpuprep kb ngc TAG for one, with its sources)"));
  for (const image of rows) {
    const runsOn = kb.ngcRunsOn(image);
    const text = (["amd64", "arm64", "igpu"] as const)
      .filter((platform) => platform !== "igpu" || image.platforms.igpu === true)
      .map(
        (platform) =>
          `${platform} ${
            runsOn[platform]
              .map((entry) => `${entry.computeCapability}${entry.derived ? "*" : ""}`)
              .join(" ") || "-"
          }`,
      )
      .join("; ");
    print(
      `  ${image.tag}  torch ${image.torch.padEnd(38)} CUDA ${image.cuda.padEnd(9)} driver ${(image.minDriverLinux ?? NOT_SOURCED).padEnd(10)} ${style.dim(`runs on ${text}`)}`,
    );
  }
  print(style.dim("  (* rests on something derived; `kb ngc TAG` says what)"));
  return text(lines);
}

/** `kb pkg NAME [VERSION]`: requires-python and the torch requirement, per release range. */
export function renderKbPackage(answer: PackageRequirementsAnswer, style: Style): string {
  const { lines, print } = collector();
  print(style.bold(`${answer.package}${answer.version ? ` ${answer.version}` : ""}`));
  for (const row of answer.rows) {
    const python = row.requiresPython === null ? NOT_SOURCED : row.requiresPython || "any (none declared)";
    const torch =
      row.torch === null
        ? NOT_SOURCED
        : row.torch === "none"
          ? "none (no torch dependency)"
          : row.torch === "any"
            ? "any version"
            : row.torch;
    print(
      `  ${row.versions.padEnd(24)} requires-python ${python}; torch ${torch} ${style.dim(row.confidence)}`,
    );
    if (row.note) print(style.dim(`      ${row.note}`));
  }
  const seen = new Map<string, Source>();
  for (const row of answer.rows)
    for (const source of row.sources) if (!seen.has(source.url)) seen.set(source.url, source);
  printSources(print, style, [...seen.values()]);
  return text(lines);
}

export function renderKbExtension(row: ExtensionRow, style: Style): string {
  const { lines, print } = collector();
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
  return text(lines);
}

export function renderKbResolve(
  kb: KnowledgeBase,
  gpu: GpuRow,
  query: TorchBuildQuery,
  evaluation: TorchBuildEvaluation,
  images: NgcImageVerdict[],
  style: Style,
): string {
  const { lines, print } = collector();
  print(
    style.bold(
      `${gpu.name} (${gpu.computeCapability}), driver ${formatDriverVersion(query.driverVersion)}, ${query.cpuArch}${query.python ? `, Python ${query.python}` : ""}`,
    ),
  );
  const driverCheck = kb.checkDriverForGpu(gpu, query.driverVersion);
  if (driverCheck.verdict === "too-old" || driverCheck.verdict === "too-new")
    print(style.red(`  ${driverCheck.reason}`));
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
  return text(lines);
}

function printSources(print: Print, style: Style, sources: readonly Source[]): void {
  print(style.dim("sources:"));
  for (const source of sources)
    print(style.dim(`  ${sourceText(source.url)}${source.note ? ` (${source.note})` : ""}`));
}

function yesNo(value: boolean | null): string {
  return value === null ? NOT_SOURCED : value ? "yes" : "no";
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
