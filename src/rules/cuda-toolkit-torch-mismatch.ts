/**
 * The CUDA toolkit a source build would use (CUDA_HOME / CUDA_PATH / nvcc on PATH / /usr/local/cuda,
 * as torch's cpp_extension finds it) is of another CUDA release than torch was built with.
 * Mirrors cpp_extension._check_cuda_version (pytorch v1.13.1 torch/utils/cpp_extension.py, the
 * same in later releases): a different major raises CUDA_MISMATCH_MESSAGE and the build stops; a
 * different minor only warns CUDA_MISMATCH_WARN ("Most likely this shouldn't be a problem").
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { versionParts } from "../util/version.js";
import { platformOfCpu } from "../project/install-prediction.js";
import { installCommands } from "../kb/queries/torch.js";
import { cudaIndexTag } from "../rule-helpers/torch-build-advice.js";
import { pythonCmd } from "../rule-helpers/view.js";
import { describeToolkit } from "../rule-helpers/toolkit-view.js";

export const cudaToolkitTorchMismatch: Rule = {
  id: "cuda-toolkit-torch-mismatch",
  title: "The CUDA toolkit for source builds differs from torch's CUDA",
  severity: "warning",
  check(facts, kb) {
    const toolkit = facts.python.toolkit;
    const torch = facts.python.torch;
    // A CPU-only torch has no CUDA to match (cpp_extension builds no CUDA code against it); no
    // toolkit or an unreadable nvcc is cuda-toolkit-missing's business.
    if (!toolkit?.release || !torch?.cudaVersion) return [];
    const [nvccMajor, nvccMinor] = versionParts(toolkit.release);
    const [torchMajor, torchMinor] = versionParts(torch.cudaVersion);
    if (nvccMajor === torchMajor && nvccMinor === torchMinor) return [];
    const major = nvccMajor !== torchMajor;
    const python = pythonCmd(facts);
    const home = `/usr/local/cuda-${torch.cudaVersion}`;
    const commands = [
      `# with CUDA ${torch.cudaVersion} installed at ${home}:`,
      `export CUDA_HOME=${home} PATH=${home}/bin:$PATH`,
    ];
    // Or the torch built for the toolkit's CUDA, where PyTorch publishes one for this release.
    const platform = platformOfCpu(facts.host.cpuArch);
    const build = platform ? kb.torchBuild(torch.version, cudaIndexTag(toolkit.release), platform) : null;
    if (build)
      commands.push(
        `# or the torch ${torch.version.split("+")[0]} build for CUDA ${toolkit.release}:`,
        `${python} -m ${installCommands(build, torch.version, true).pip.replace(/^pip install /, "pip install --force-reinstall ")}`,
      );
    return [
      makeFinding(this, {
        severity: major ? "warning" : "info",
        message: major
          ? `Source builds of CUDA extensions here would use nvcc ${toolkit.release} (${describeToolkit(toolkit)}), but torch ${torch.version} was built with CUDA ${torch.cudaVersion}: torch.utils.cpp_extension stops such a build with "The detected CUDA version (${toolkit.release}) mismatches the version that was used to compile PyTorch (${torch.cudaVersion})".`
          : `Source builds here would use nvcc ${toolkit.release} (${describeToolkit(toolkit)}) and torch ${torch.version} was built with CUDA ${torch.cudaVersion}: the same major, so torch.utils.cpp_extension only warns about the minor version and builds.`,
        evidence: [
          ev("CUDA toolkit", `${toolkit.home} (${toolkit.source})`),
          ev("nvcc --version", `release ${toolkit.release} (${toolkit.nvcc})`),
          ev("torch CUDA", `${torch.cudaVersion} (torch ${torch.version})`),
        ],
        fix: {
          summary: major
            ? `Point CUDA_HOME (and PATH) at a CUDA ${torchMajor}.x toolkit, ideally ${torch.cudaVersion}, before building extensions, or install the torch built for CUDA ${toolkit.release}.`
            : `Nothing stops a build; for identical headers point CUDA_HOME at CUDA ${torch.cudaVersion}.`,
          commands,
        },
      }),
    ];
  },
};
