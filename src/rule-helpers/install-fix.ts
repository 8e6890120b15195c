/**
 * The edits that make a project's manifests install a torch with code for this GPU: which line to
 * change and to what, for each manifest kind, then the install command. The wheel comes from the
 * `kb resolve` resolver (kb.torchBuildsFor), the conda build from kb.condaTorchBuildsFor.
 */
import { smiDriver } from "../facts/driver.js";
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase, TorchBuildChoice } from "../kb/index.js";
import { formatComputeCapability, type ComputeCapability } from "../kb/compat.js";
import { installCommands } from "../kb/queries/torch.js";
import { compareVersions, versionParts } from "../util/version.js";
import type { Fix } from "../findings/types.js";
import { seriesAccepts } from "../project/series.js";
import { nearestSeries } from "../project/nearest-series.js";
import type { InstallPrediction } from "../project/install-prediction.js";
import { pythonCmd } from "./view.js";
import { environmentFileFix } from "./torch-build-advice.js";

function edit(origin: string, from: string, to: string): string {
  return `# ${origin}: ${from}  ->  ${to}`;
}

/** The resolver's best wheel for this GPU; one the project's pin accepts when there is one. */
function bestWheel(
  facts: Facts,
  kb: KnowledgeBase,
  cc: ComputeCapability,
  specifier: string,
): { choice: TorchBuildChoice; keepsPin: boolean } | null {
  const driver = smiDriver(facts.host.nvidia);
  const cpuArch = facts.host.cpuArch;
  if (!driver || (cpuArch !== "x86_64" && cpuArch !== "aarch64")) return null;
  const choices = kb
    .torchBuildsFor({
      computeCapability: cc,
      driverVersion: driver,
      cpuArch,
      python: facts.python.interpreter.version,
    })
    .filter((c) => c.runs === "sass");
  const keeping = choices.find((c) => seriesAccepts(c.build.torch, specifier));
  if (keeping) return { choice: keeping, keepsPin: true };
  // No build the pin allows runs: the nearest series that does, as init's pin policy changes it.
  const nearest = nearestSeries(
    specifier,
    choices.map((c) => c.build.torch),
  );
  const changed = choices.find((c) => c.build.torch === nearest) ?? choices[0];
  return changed ? { choice: changed, keepsPin: false } : null;
}

type BestWheel = NonNullable<ReturnType<typeof bestWheel>>;
type WheelBuild = BestWheel["choice"]["build"];

function wheelFix(
  facts: Facts,
  kb: KnowledgeBase,
  prediction: InstallPrediction,
  cc: ComputeCapability,
): Fix {
  const pinned = prediction.exactVersion ? "" : prediction.specifier;
  const best = bestWheel(facts, kb, cc, pinned);
  if (!best)
    return {
      summary:
        "No published PyTorch wheel in the knowledge base runs on this GPU with this driver; see the full verdict, or use an NGC container.",
      commands: [
        `gpuprep kb resolve --gpu ${formatComputeCapability(cc)} --driver ${facts.host.nvidia.driverVersion ?? "VER"}`,
      ],
    };
  const build = best.choice.build;
  const requirement = requirementEdit(prediction, best, pinned);
  return {
    summary:
      `Make ${prediction.command} install torch ${build.torch} ${build.variant} from ${build.indexUrl}: ${best.choice.reasons.join("; ")}` +
      (best.keepsPin
        ? "."
        : "; no build the current pin allows runs here, so the pin changes too (keep torchvision / torchaudio pins in step with it)."),
    commands: [
      ...(requirement ? [requirement] : []),
      ...indexEdits(prediction, build),
      ...wheelInstall(facts, prediction, build),
    ],
  };
}

/** `pip install .`: pip reads no index from pyproject.toml. */
function pipInstallsProject(prediction: InstallPrediction): boolean {
  return prediction.tool === "pip" && prediction.command === "pip install .";
}

/** The torch requirement's new line: pixi's names the index too; elsewhere only where the pin changes. */
function requirementEdit(prediction: InstallPrediction, best: BestWheel, pinned: string): string | null {
  const [line] = prediction.lines;
  if (!line) return null;
  const build = best.choice.build;
  const pin = best.keepsPin && pinned ? `torch${pinned}` : `torch==${build.torch}.*`;
  if (prediction.tool === "pixi")
    return edit(
      line.origin,
      line.text,
      `torch = { version = "${pin.slice("torch".length)}", index = "${build.indexUrl}" }`,
    );
  const pinChanges = !best.keepsPin || prediction.exactVersion !== null;
  return pinChanges ? edit(line.origin, line.text, line.text.startsWith('"') ? `"${pin}"` : pin) : null;
}

/** The index URLs the project routes torch through, pointed at the build's; or where to add one. */
function indexEdits(prediction: InstallPrediction, build: WheelBuild): string[] {
  const indexLines = prediction.lines
    .slice(1)
    .filter((l) => /https?:\/\//.test(l.text) && !/uv\.lock$/.test(l.origin));
  const commands = indexLines.map((line) =>
    edit(line.origin, line.text, line.text.replace(/https?:\/\/\S+?(?=["\s]|$)/, build.indexUrl)),
  );
  if (
    indexLines.length === 0 &&
    prediction.tool !== "pixi" &&
    !pipInstallsProject(prediction) &&
    !build.pypiDefault
  ) {
    if (prediction.tool === "uv")
      commands.push(
        `# ${prediction.manifest}: add [[tool.uv.index]] name = "pytorch-${build.variant}", url = "${build.indexUrl}", explicit = true, and [tool.uv.sources] torch = { index = "pytorch-${build.variant}" }`,
      );
    else commands.push(`# ${prediction.manifest}: add the line --extra-index-url ${build.indexUrl}`);
  }
  return commands;
}

/** The lock refreshed where there is one, then the project's own install command. */
function wheelInstall(facts: Facts, prediction: InstallPrediction, build: WheelBuild): string[] {
  const commands: string[] = [];
  if (prediction.lines.some((l) => /uv\.lock$/.test(l.origin)))
    commands.push("uv lock --upgrade-package torch");
  const python = pythonCmd(facts);
  if (prediction.tool === "uv") commands.push("uv sync");
  else if (prediction.tool === "pixi") commands.push(prediction.command);
  // pip reads no index from pyproject.toml: name it on the command line.
  else if (pipInstallsProject(prediction))
    commands.push(`${python} -m pip install . --extra-index-url ${build.indexUrl}`);
  else if (prediction.tool === "pip") commands.push(`${python} -m ${prediction.command}`);
  else commands.push(`${python} -m ${installCommands(build, undefined, true).pip}`);
  return commands;
}

function newestVersion(versions: string[]): string | null {
  return [...versions].sort(compareVersions).pop() ?? null;
}

/** conda-forge's newest build with SASS for `cc` under this driver, on this platform. */
function condaBuildFor(facts: Facts, kb: KnowledgeBase, cc: ComputeCapability) {
  const platform = facts.host.cpuArch === "aarch64" ? "linux-aarch64" : "linux-x86_64";
  const driver = smiDriver(facts.host.nvidia);
  return driver
    ? kb
        .condaTorchBuildsFor({
          computeCapability: cc,
          driverVersion: driver,
          platform,
          channel: "conda-forge",
        })
        .find((v) => v.runs === "sass")
    : undefined;
}

function condaFix(
  facts: Facts,
  kb: KnowledgeBase,
  prediction: InstallPrediction,
  cc: ComputeCapability,
): Fix {
  const best = condaBuildFor(facts, kb, cc);
  const wheel = bestWheel(facts, kb, cc, "");
  const alternative = wheel
    ? ` Or take torch from PyPI: ${installCommands(wheel.choice.build, undefined, true).pip}; or an NGC container: gpuprep init --strategy container.`
    : " Or use an NGC container: gpuprep init --strategy container.";
  const version = best ? newestVersion(best.build.versions) : null;
  if (!best || !version || !best.build.cuda)
    return {
      summary: `No conda build in the knowledge base has SASS for compute capability ${formatComputeCapability(cc)} with this driver.${alternative}`,
      commands: wheel
        ? [`${pythonCmd(facts)} -m ${installCommands(wheel.choice.build, undefined, true).pip}`]
        : ["gpuprep init --strategy container --dry-run"],
    };
  const glob = `cuda${best.build.cuda.replace(".", "")}*`;
  const cudaMajor = versionParts(best.build.cuda)[0] ?? 0;
  return {
    summary: `Ask for conda-forge's pytorch ${version} CUDA ${best.build.cuda} build: ${best.reason}.${alternative}`,
    commands:
      prediction.tool === "pixi"
        ? pixiCondaEdits(prediction, version, glob, cudaMajor)
        : environmentFileEdits(prediction, version, glob),
  };
}

/** pixi: the pytorch line with version, build and channel, the system CUDA it needs, no CPU-only packages. */
function pixiCondaEdits(
  prediction: InstallPrediction,
  version: string,
  glob: string,
  cudaMajor: number,
): string[] {
  const commands: string[] = [];
  const torchLine = prediction.condaTorchLine;
  if (torchLine)
    commands.push(
      edit(
        torchLine.origin,
        torchLine.text,
        `pytorch = { version = "==${version}", build = "${glob}", channel = "conda-forge" }`,
      ),
    );
  const current = prediction.systemCuda;
  if (!current) commands.push(`# ${prediction.manifest}: add [system-requirements] cuda = "${cudaMajor}.0"`);
  else if ((versionParts(current.value)[0] ?? 0) < cudaMajor)
    commands.push(edit(current.origin, `cuda = "${current.value}"`, `cuda = "${cudaMajor}.0"`));
  for (const line of prediction.lines)
    if (/^(pytorch-cpu|cpuonly|pytorch-cuda)\b/.test(line.text))
      commands.push(edit(line.origin, line.text, "(remove it)"));
  commands.push("pixi install");
  return commands;
}

/** environment.yml: the pytorch line pinned to the build, the CPU-only and pytorch-cuda lines removed. */
function environmentFileEdits(prediction: InstallPrediction, version: string, glob: string): string[] {
  const commands: string[] = [];
  const torchLine = prediction.condaTorchLine;
  if (torchLine)
    commands.push(edit(torchLine.origin, torchLine.text, `conda-forge::pytorch=${version}=${glob}`));
  for (const line of prediction.lines)
    if (/^(pytorch::)?(pytorch-cpu|cpuonly|pytorch-cuda)\b/.test(line.text))
      commands.push(
        edit(
          line.origin,
          line.text,
          "(remove it: conda-forge picks its CUDA build from the driver's __cuda)",
        ),
      );
  commands.push(`conda env update -f ${prediction.manifest} --prune`);
  return commands;
}

/** The fix for a prediction that gives no (or only PTX) code for capability `cc`, or a CPU-only build. */
export function installFix(
  facts: Facts,
  kb: KnowledgeBase,
  prediction: InstallPrediction,
  cc: ComputeCapability,
): Fix {
  if (prediction.ecosystem !== "conda") return wheelFix(facts, kb, prediction, cc);
  // An environment.yml gets the torch init plans for it (pip: from the PyTorch index), the one
  // the environment fix names too; conda-forge's build is the fix where none is known, and pixi's.
  const sameAsInit = prediction.tool === "conda" ? environmentFileFix(facts, kb, prediction.manifest) : null;
  return sameAsInit ?? condaFix(facts, kb, prediction, cc);
}
