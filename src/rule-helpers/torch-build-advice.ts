/**
 * What torch to install instead, in one place: every rule that ends in "install another torch"
 * asks here. The knowledge base ranks the published builds for this GPU + driver + CPU + Python
 * (kb.torchBuildsFor); without a GPU capability or driver to ask about, the advice names the
 * driver's newest native CUDA (kb.newestNativeCuda) and PyTorch's index naming.
 */
import { formatDriverVersion } from "../vocabulary/driver-version.js";
import { smiDriver } from "../facts/driver.js";
import type { Facts, Requirement } from "../facts/schema.js";
import { projectRequirements } from "../project/requirements.js";
import { seriesAccepts } from "../project/series.js";
import { torchConstraints } from "../project/torch-constraints.js";
import { routedVariant, torchRoutes } from "../project/torch-routes.js";
import { linuxMarkers } from "../project/markers.js";
import { installCommand, installerFor } from "./reinstall-fix.js";
import type { KnowledgeBase } from "../kb/index.js";
import { installCommands } from "../kb/queries/torch.js";
import { versionParts } from "../util/version.js";
import { deviceCapabilities, pythonCmd, shellQuote } from "./view.js";
import type { Fix } from "../findings/types.js";

interface TorchAdvice {
  summary: string;
  commands: string[];
}

/** "13.0" -> "cu130", PyTorch's wheel index naming (https://pytorch.org/get-started/locally/). */
export function cudaIndexTag(cudaVersion: string): string {
  const [major = "0", minor = "0"] = cudaVersion.split(".");
  return `cu${major}${minor}`;
}

function checkCommand(facts: Facts): string {
  return `${pythonCmd(facts)} -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list())"`;
}

/**
 * The KB's best build for this machine's first GPU, or null when it cannot be asked or has none.
 * With a project, the best build its torch pin and its companion pins (torchvision==0.24.1 means
 * torch 2.9.1) accept, so the environment fix names the torch the project fix names; where none
 * does, the best build, with the constraints it does not meet.
 */
function bestBuild(facts: Facts, kb: KnowledgeBase) {
  const device = deviceCapabilities(facts)[0];
  const driver = smiDriver(facts.host.nvidia);
  const cpuArch = facts.host.cpuArch;
  if (!device || !driver || (cpuArch !== "x86_64" && cpuArch !== "aarch64")) return null;
  const choices = kb.torchBuildsFor({
    computeCapability: device.cc,
    driverVersion: driver,
    cpuArch,
    python: facts.python.interpreter.version,
  });
  const requirements = facts.project ? projectRequirements(facts.project).requirements : [];
  const constraints = torchConstraints(requirements, kb);
  const accepted = choices.filter((c) => constraints.every((k) => seriesAccepts(c.build.torch, k.specifier)));
  // The project's route to one PyTorch variant (a cu121 index, pytorch-cuda=12.1) is kept where a
  // build of it runs here, as init keeps it.
  const route = projectRoute(facts, requirements, cpuArch);
  const routed = route ? accepted.find((c) => c.build.variant === route.variant) : undefined;
  const keeping = routed ?? accepted[0];
  const choice = keeping ?? choices[0];
  if (!choice) return null;
  return {
    choice,
    device,
    honoured: keeping ? constraints : [],
    unmet: keeping ? [] : constraints,
    route: routed ? route : null,
  };
}

/** The one PyTorch variant the project's torch routes ask for, with where it is asked. */
function projectRoute(
  facts: Facts,
  requirements: Requirement[],
  cpuArch: "x86_64" | "aarch64",
): { variant: string; origin: string } | null {
  if (!facts.project) return null;
  const routes = torchRoutes(
    facts.project,
    linuxMarkers(cpuArch, facts.python.interpreter.version),
    new Set(requirements.map((r) => r.normalizedName)),
  );
  const variant = routedVariant(routes);
  const origin = routes.find((r) => r.package === "torch" && r.torchIndex?.variant.tag === variant)?.origin;
  return variant && origin ? { variant, origin } : null;
}

/** " (it keeps torch==2.7.1 (requirements.txt:1))", or what no build here meets; "" without a project pin. */
function constraintNote(best: NonNullable<ReturnType<typeof bestBuild>>): string {
  const kept = [
    ...best.honoured.map((c) => c.from),
    ...(best.route ? [`the route to ${best.route.variant} (${best.route.origin})`] : []),
  ];
  if (kept.length > 0) return ` (it keeps ${kept.join(" and ")})`;
  if (best.unmet.length > 0)
    return ` (no build that runs here meets ${best.unmet.map((c) => c.from).join(" and ")}: change the pin as \`gpuprep init\` says)`;
  return "";
}

/** Conda packages of torch's family: an environment file's lines for them give way to the pip: torch. */
const CONDA_TORCH = [
  "pytorch",
  "pytorch-gpu",
  "pytorch-cpu",
  "pytorch-cuda",
  "torchvision",
  "torchaudio",
  "cpuonly",
];
/** Runs mamba where it is installed, conda else: one line that fits either installation. */
const CONDA_TOOL = '"$(command -v mamba || command -v conda)"';

type CondaManifest = NonNullable<NonNullable<Facts["project"]>["condaManifests"]>[number];

/** environment.yml's lines for `pin` (as `gpuprep init` edits them), then mamba's or conda's update. */
function environmentFileCommands(manifest: CondaManifest, pin: string, indexUrl: string): string[] {
  const file = manifest.path.split("/").pop()!;
  return [
    ...manifest.dependencies
      .filter((d) => CONDA_TORCH.includes(d.name))
      .map((d) => `# ${d.origin}: ${d.raw}  ->  (comment it out: torch comes from the pip: list)`),
    `# ${file}, under pip:: --extra-index-url ${indexUrl} and ${pin}`,
    `${CONDA_TOOL} env update --file ${shellQuote(file)} --prune`,
  ];
}

/**
 * The project fix for an environment.yml whose torch does not run here: the torch the environment
 * fix names and `gpuprep init` plans (issue 22 item 8: both fixes name the same torch), from the
 * PyTorch index under the file's pip: list. null where no build runs or the file is not gathered.
 */
export function environmentFileFix(facts: Facts, kb: KnowledgeBase, manifestPath: string): Fix | null {
  const best = bestBuild(facts, kb);
  const manifest = facts.project?.condaManifests?.find(
    (m) => m.kind === "conda-environment" && (m.path === manifestPath || m.path.endsWith(`/${manifestPath}`)),
  );
  if (!best || !manifest) return null;
  const { build, reasons } = best.choice;
  const file = manifest.path.split("/").pop()!;
  return {
    summary:
      `Take torch ${build.torch} ${build.variant} from ${build.indexUrl} through ${file}'s pip: list, as \`gpuprep init\` plans it` +
      `${constraintNote(best)}: ${reasons.join("; ")}.`,
    commands: environmentFileCommands(manifest, `torch==${build.torch}.*`, build.indexUrl),
  };
}

/**
 * A conda environment's torch fix (issue 22 item 8): with the project's environment.yml, its lines
 * (as \`gpuprep init\` edits them) and \`env update --prune\` by mamba or conda, so the next update
 * keeps the torch; without one, a conda-installed torch removed first, since pip's torch over conda's
 * leaves both packages' files in one site-packages. null: pip installed torch, pip's command fits.
 */
function condaTorchCommands(
  facts: Facts,
  pin: string,
  indexUrl: string,
  pipCommand: string,
): string[] | null {
  if (installerFor(facts, "torch") !== "conda") return null;
  const manifest = facts.project?.condaManifests?.find((m) => m.kind === "conda-environment");
  if (manifest) return environmentFileCommands(manifest, pin, indexUrl);
  const byConda = facts.python.distributions.some(
    (d) => d.normalizedName === "torch" && d.installer === "conda",
  );
  if (!byConda) return null;
  const prefix = facts.python.interpreter.prefix;
  return [
    `${CONDA_TOOL} remove --force -y -p ${shellQuote(prefix)} pytorch   # conda's torch would stay beside pip's`,
    pipCommand,
  ];
}

/**
 * Advice for a torch that runs CUDA on this machine. `needArch` is the sm_ target the build must
 * contain when the problem is arch coverage.
 */
export function torchBuildAdvice(facts: Facts, kb: KnowledgeBase, needArch: string | null): TorchAdvice {
  const python = pythonCmd(facts);
  const best = bestBuild(facts, kb);
  if (best) {
    const { build, reasons } = best.choice;
    const pin = `torch==${build.torch}.*`;
    const pip = installCommand(facts, [`"${pin}"`], {
      reinstall: true,
      trailing: [`--index-url ${build.indexUrl}`],
    });
    return {
      summary:
        `Install torch ${build.torch} ${build.variant} (${build.platform}), the best published build for ` +
        `${best.device.name}${constraintNote(best)}: ${reasons.join("; ")}.`,
      commands: [...(condaTorchCommands(facts, pin, build.indexUrl, pip) ?? [pip]), checkCommand(facts)],
    };
  }
  const driver = smiDriver(facts.host.nvidia);
  const native = driver ? kb.newestNativeCuda(driver) : null;
  const archPart = needArch ? ` whose torch.cuda.get_arch_list() includes ${needArch}` : "";
  if (!native || !driver) {
    return {
      summary: `Install a CUDA build of torch${archPart} for a CUDA version this driver runs (update the driver if it is older than the build needs).`,
      commands: [
        `${python} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cuXYZ`,
        checkCommand(facts),
      ],
    };
  }
  const tag = cudaIndexTag(native.version);
  return {
    summary:
      `Install a CUDA build of torch${archPart}, built for CUDA ${native.version} or older ` +
      `(driver ${formatDriverVersion(driver)} runs CUDA <= ${native.version} natively); use the newest index at or below ${tag} that PyTorch lists for your torch version.`,
    commands: [
      `${python} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/${tag}`,
      checkCommand(facts),
    ],
  };
}

/** Minor releases torch `older` trails `newer` ("2.9.0a0+50eac81" vs "2.13"); Infinity across majors. */
function releasesBehind(older: string, newer: string): number {
  const [oMajor = 0, oMinor = 0] = versionParts(older);
  const [nMajor = 0, nMinor = 0] = versionParts(newer);
  if (oMajor !== nMajor) return oMajor < nMajor ? Infinity : 0;
  return Math.max(0, nMinor - oMinor);
}

/** The one torch install for this machine, for pip, uv and a container, from the `kb resolve` resolver. */
interface TorchInstallAdvice {
  summary: string;
  /** pip, uv pip, then the NGC container (when an image covers the GPU), then a check. */
  commands: string[];
  /** "torch 2.13 cu130 (linux-x86_64)" */
  build: string;
  indexUrl: string;
  image: string | null;
}

/**
 * The best build kb.torchBuildsFor ranks for this GPU, driver, CPU and Python (what `gpuprep kb
 * resolve` prints first), with its index named explicitly, and the NGC image kb.preferredNgcImage
 * picks. Null when the machine cannot be asked about (no GPU capability or driver) or nothing runs.
 */
export function torchInstallAdvice(facts: Facts, kb: KnowledgeBase): TorchInstallAdvice | null {
  const best = bestBuild(facts, kb);
  if (!best) return null;
  const { build, reasons } = best.choice;
  const { pip, uv } = installCommands(build, undefined, true);
  const note = constraintNote(best);
  const python = pythonCmd(facts);
  const cpuArch = facts.host.cpuArch === "aarch64" ? "aarch64" : "x86_64";
  const preferred = kb.preferredNgcImage({
    computeCapability: best.device.cc,
    driverVersion: smiDriver(facts.host.nvidia),
    cpuArch,
  });
  const image = preferred?.image ?? null;
  const commands = [
    `${python} -m ${pip}`,
    uv.replace(/^uv pip install /, `uv pip install --python ${python} `),
  ];
  const docker = image
    ? `docker run --gpus all --ipc=host --rm -it -v "$PWD":/workspace -w /workspace ${image.image}`
    : null;
  // As `gpuprep init --strategy auto` judges: an image more than two torch releases behind the wheel is
  // named, with its torch, but not offered as the command to run.
  const lag = image ? releasesBehind(image.torch, build.torch) : 0;
  let container = "";
  if (docker && image && lag <= 2) {
    commands.push(docker);
    container = `; or use the NGC container ${image.image} (${preferred!.reason})`;
  } else if (docker && image) {
    const behind = lag === Infinity ? "a major release" : `${lag} releases`;
    commands.push(`# the NGC image that runs here brings torch ${image.torch}, ${behind} behind: ${docker}`);
    container = `; the newest NGC image the knowledge base can vouch for here, ${image.image}, brings torch ${image.torch} (${behind} behind)`;
  }
  commands.push(checkCommand(facts));
  return {
    summary:
      `Install torch ${build.torch} ${build.variant} (${build.platform}) from ${build.indexUrl}, the best published build for ` +
      `${best.device.name}${note}: ${reasons.join("; ")}` +
      container +
      ".",
    commands,
    build: `torch ${build.torch} ${build.variant} (${build.platform})`,
    indexUrl: build.indexUrl,
    image: image?.image ?? null,
  };
}
