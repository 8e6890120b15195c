/** `gpuprep kb …`: the compatibility knowledge itself, readable with reasons and sources, or --json. */
import { newestTagFirst } from "../kb/image-tag.js";
import { parseDriverVersion } from "../vocabulary/driver-version.js";
import { writeDocument, writeText } from "../report/terminal.js";
import { UserError } from "../errors.js";
import { docsUrl } from "../docs-url.js";
import { defineCommand, type OptionTable } from "./command.js";
import { makeStyle, useColor, type Style } from "../report/style.js";
import {
  renderKbCuda,
  renderKbExtension,
  renderKbGpu,
  renderKbNgc,
  renderKbNgcList,
  renderKbPackage,
  renderKbResolve,
  renderKbTorch,
  renderKbUpdate,
} from "../report/kb-text.js";
import { KnowledgeBase, loadKnowledgeBase } from "../kb/index.js";
import { readableGpuNames } from "../kb/queries/gpu.js";
import { defaultOverlayPath, writeOverlay } from "../kb/overlay.js";
import { DEFAULT_INDEX_URL, fetchTorchIndex } from "../kb/update.js";
import type { GpuRow } from "../kb/types.js";
import { majorMinor } from "../util/version.js";
import { renderJsonDocument } from "../report/envelope.js";
import { KB_SCHEMA, KB_SCHEMA_VERSION } from "../report/document-ids.js";

const OPTIONS = {
  json: { type: "boolean", default: false, description: "machine-readable output" },
  gpu: {
    type: "string",
    value: "NAME",
    description: "kb resolve: the GPU, by nvidia-smi name, user name or capability",
  },
  driver: { type: "string", value: "VER", description: "kb resolve: the NVIDIA driver (580.95.05)" },
  arch: {
    type: "string",
    value: "x86_64|aarch64",
    description: "kb resolve: the host CPU (default: the GPU's own host CPU, else x86_64)",
  },
  python: { type: "string", value: "VER", description: "kb resolve: the Python version (3.12)" },
  "index-url": {
    type: "string",
    value: "URL",
    description: `kb update: the wheel index to read (default: ${DEFAULT_INDEX_URL})`,
  },
} as const satisfies OptionTable;

const KB_SUBJECTS = ["gpu", "cuda", "torch", "ngc", "ext", "pkg", "resolve", "update"];

export const kbCommand = defineCommand({
  name: "kb",
  title: "the compatibility knowledge base",
  positionals: "TOPIC [NAME] [VERSION]",
  firstWords: KB_SUBJECTS,
  usage: [
    [
      "gpu NAME|CC",
      'a GPU by nvidia-smi name, user name ("5070ti") or capability ("12.1"):\nits driver floor, and the GPUs a shared name ("H100") stands for',
    ],
    ["cuda VERSION", "a CUDA toolkit: drivers it needs, architectures it compiles"],
    ["torch VERSION", "the builds of a PyTorch release: variants, arch lists, Pythons"],
    [
      "ngc [TAG]",
      "an NGC PyTorch image (e.g. 25.01): torch, CUDA, driver floor,\nplatforms, torch's arch list per platform image, the GPUs it\nruns on and the runs behind them; without TAG, every image",
    ],
    ["ext NAME", "an extension package (flash-attn, xformers, ...)"],
    [
      "pkg NAME [VERSION]",
      "requires-python and the torch requirement of a package\n(unsloth, vllm, xformers, ...), per release range",
    ],
    [
      "resolve --gpu NAME --driver VER [--arch x86_64|aarch64] [--python 3.12]",
      "which PyTorch builds and NGC images run there, best first",
    ],
    [
      "update [--index-url URL]",
      "refresh torch builds from the PyTorch wheel index into\n~/.cache/gpuprep/kb-overlay.json (never the packaged data)",
    ],
  ],
  options: OPTIONS,
  examples: [
    ["gpuprep kb gpu 5070ti", "a GPU: capability, memory, peaks, driver floor"],
    ["gpuprep kb ngc 25.01", "an NGC PyTorch image and the GPUs it covers"],
    [
      'gpuprep kb resolve --gpu "NVIDIA GB10" --driver 580.95.05',
      "the torch builds and images that run there",
    ],
  ],
  async run({ values, positionals }) {
    const [topic, subject, ...rest] = positionals;
    // `kb pkg NAME VERSION` is the one topic with a second argument.
    const version = topic === "pkg" ? rest[0] : undefined;
    const extra = topic === "pkg" ? rest.slice(1) : rest;
    const json = values.json === true;
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
    if (topic === "update") return update(values["index-url"] ?? DEFAULT_INDEX_URL, json);
    const kb = loadKnowledgeBase();
    if (topic === "resolve") return resolve(kb, values, json);
    if (!subject && topic !== "ngc")
      throw new UserError(
        `kb ${topic}: missing the name or version`,
        `e.g. gpuprep kb ${topic} ${EXAMPLES[topic] ?? ""}`,
      );
    switch (topic) {
      case "gpu":
        return showGpu(kb, subject!, json);
      case "cuda":
        return showCuda(kb, subject!, json);
      case "torch":
        return showTorch(kb, subject!, json);
      case "ngc":
        return showNgc(kb, subject, json);
      case "pkg":
        return showPackage(kb, subject!, version, json);
      default: // "ext", the one subject left after the checks above
        return showExtension(kb, subject!, json);
    }
  },
});

const EXAMPLES: Record<string, string> = {
  gpu: '"NVIDIA GB10"',
  cuda: "12.8",
  torch: "2.11",
  ngc: "25.01",
  ext: "flash-attn",
  pkg: "unsloth 2025.9.1",
};

/** Under --json every topic prints one enveloped document: { schema, schemaVersion, tool, topic, result }. */
function emit(json: boolean, topic: string, value: unknown, render: (style: Style) => string): number {
  if (json) writeDocument(renderJsonDocument(KB_SCHEMA, KB_SCHEMA_VERSION, { topic, result: value }));
  // kb text shows overlay files' contents too: sanitized like every text report.
  else writeText(render(makeStyle(useColor())));
  return 0;
}

function requireGpu(kb: KnowledgeBase, name: string): GpuRow {
  const { match, candidates } = kb.resolveGpu(name);
  if (match) return match;
  const hint =
    candidates.length > 0
      ? `closest: ${candidates.map((row) => row.name).join(", ")}`
      : `try a name as nvidia-smi prints it or one of ${readableGpuNames(kb.data.gpus, kb.data.systems, 18).join(", ")} …, or a capability ("9.0", "sm_120")`;
  throw new UserError(`unknown GPU "${name}"`, hint);
}

function showGpu(kb: KnowledgeBase, name: string, json: boolean): number {
  const gpu = requireGpu(kb, name);
  const arch = kb.arch(kb.capabilityOf(gpu));
  const variants = kb.gpuVariants(gpu);
  const driverFloor = kb.minimumDriverFor(gpu)!;
  return emit(json, "gpu", { gpu, arch, variants, driverFloor }, (style) =>
    renderKbGpu(gpu, style, { variants, driverFloor }),
  );
}

function showCuda(kb: KnowledgeBase, version: string, json: boolean): number {
  const toolkit = kb.cudaToolkit(version);
  if (!toolkit)
    throw new UserError(
      `no CUDA ${version} in the knowledge base`,
      `known: ${kb.data.cudaToolkits.map((row) => row.version).join(", ")}`,
    );
  return emit(json, "cuda", toolkit, (style) => renderKbCuda(toolkit, style));
}

function showTorch(kb: KnowledgeBase, version: string, json: boolean): number {
  const builds = kb.torchBuildsForVersion(version);
  if (builds.length === 0) {
    const known = [...new Set(kb.data.torchBuilds.map((row) => row.torch))].join(", ");
    throw new UserError(
      `no PyTorch ${majorMinor(version)} builds in the knowledge base`,
      `known releases: ${known}; \`gpuprep kb update\` refreshes from the wheel index`,
    );
  }
  return emit(json, "torch", builds, (style) => renderKbTorch(version, builds, style));
}

function showNgc(kb: KnowledgeBase, tag: string | undefined, json: boolean): number {
  if (tag === undefined) return listNgc(kb, json);
  const image = kb.ngcImage(tag);
  if (!image) {
    const known = kb.data.ngcImages.map((row) => row.tag).join(", ") || "none";
    throw new UserError(
      `no NGC PyTorch image "${tag}" in the knowledge base`,
      `known tags: ${known} (tags left out, and why: ${docsUrl("docs/knowledge-base.md")})`,
    );
  }
  const covers = kb.ngcCoverage(image);
  const runsOn = kb.ngcRunsOn(image);
  return emit(json, "ngc", { ...image, covers, runsOn }, (style) => renderKbNgc(kb, image, runsOn, style));
}

function listNgc(kb: KnowledgeBase, json: boolean): number {
  const rows = [...kb.data.ngcImages].sort((a, b) => newestTagFirst(b, a));
  return emit(json, "ngc", rows, (style) => renderKbNgcList(kb, rows, style));
}

function showPackage(kb: KnowledgeBase, name: string, version: string | undefined, json: boolean): number {
  const answer = kb.packageRequirements(name, version);
  if (answer.status === "absent") {
    const known = [...new Set(kb.data.packageRequirements.map((row) => row.package))].join(", ");
    throw new UserError(`no requirements of "${name}" in the knowledge base`, `known: ${known}`);
  }
  if (answer.status === "not-in-table") {
    const ranges = kb.packageRequirements(name).rows.map((row) => row.versions);
    throw new UserError(
      `no row of ${answer.package} covers ${version}`,
      `known ranges: ${ranges.join("; ")} (\`gpuprep kb pkg ${answer.package}\` lists them)`,
    );
  }
  return emit(json, "pkg", answer, (style) => renderKbPackage(answer, style));
}

function showExtension(kb: KnowledgeBase, name: string, json: boolean): number {
  const row = kb.extension(name);
  if (!row) {
    const known = kb.data.extensions.map((entry) => entry.name).join(", ") || "none";
    throw new UserError(`no extension "${name}" in the knowledge base`, `known: ${known}`);
  }
  return emit(json, "ext", row, (style) => renderKbExtension(row, style));
}

interface ResolveFlags {
  gpu?: string | undefined;
  driver?: string | undefined;
  arch?: string | undefined;
  python?: string | undefined;
}

function resolve(kb: KnowledgeBase, flags: ResolveFlags, json: boolean): number {
  if (!flags.gpu)
    throw new UserError(
      "kb resolve: --gpu is required",
      'e.g. gpuprep kb resolve --gpu "NVIDIA GB10" --driver 580.95.05',
    );
  // The flag takes the driver as nvidia-smi prints it: dotted digits, no blanks around them.
  const driver = flags.driver && /^\d+(\.\d+)*$/.test(flags.driver) ? parseDriverVersion(flags.driver) : null;
  if (!flags.driver || !driver)
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
  // The query as the KB takes it: the capability and driver as values (the JSON's query keeps the text).
  const asked = { ...query, computeCapability: kb.capabilityOf(gpu), driverVersion: driver };
  const evaluation = kb.evaluateTorchBuilds(asked);
  const images = kb.judgeNgcImages(asked);
  return emit(json, "resolve", { gpu, query, torch: evaluation, ngc: images }, (style) =>
    renderKbResolve(kb, gpu, asked, evaluation, images, style),
  );
}

async function update(indexUrl: string, json: boolean): Promise<number> {
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
  return emit(json, "update", summary, () => renderKbUpdate(summary));
}
