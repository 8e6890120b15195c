/**
 * What torch to install instead, in one place: every rule that ends in "install another torch"
 * asks here. The knowledge base ranks the published builds for this GPU + driver + CPU + Python
 * (kb.torchBuildsFor); without a GPU capability or driver to ask about, the advice names the
 * driver's newest native CUDA (kb.newestNativeCuda) and PyTorch's index naming.
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { formatComputeCapability } from "../kb/compat.js";
import { deviceCapabilities, pythonCmd } from "./view.js";

export interface TorchAdvice {
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

/** The KB's best build for this machine's first GPU, or null when it cannot be asked or has none. */
function bestBuild(facts: Facts, kb: KnowledgeBase) {
  const device = deviceCapabilities(facts)[0];
  const driver = facts.host.nvidia.driverVersion;
  const cpuArch = facts.host.cpuArch;
  if (!device || !driver || (cpuArch !== "x86_64" && cpuArch !== "aarch64")) return null;
  const choice = kb.torchBuildsFor({
    computeCapability: formatComputeCapability(device.cc),
    driverVersion: driver,
    cpuArch,
    python: facts.python.interpreter.version,
  })[0];
  return choice ? { choice, device } : null;
}

/**
 * Advice for a torch that runs CUDA on this machine. `needArch` is the sm_ target the build must
 * contain when the problem is arch coverage.
 */
export function torchBuildAdvice(facts: Facts, kb: KnowledgeBase, needArch: string | null): TorchAdvice {
  const python = pythonCmd(facts);
  const best = bestBuild(facts, kb);
  if (best) {
    const { build, reasons, pip } = best.choice;
    return {
      summary:
        `Install torch ${build.torch} ${build.variant} (${build.platform}), the best published build for ` +
        `${best.device.name}: ${reasons.join("; ")}.`,
      commands: [
        `${python} -m ${pip.replace(/^pip install /, "pip install --force-reinstall ")}`,
        checkCommand(facts),
      ],
    };
  }
  const driver = facts.host.nvidia.driverVersion;
  const native = driver ? kb.newestNativeCuda(driver) : null;
  const archPart = needArch ? ` whose torch.cuda.get_arch_list() includes ${needArch}` : "";
  if (!native) {
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
      `(driver ${driver} runs CUDA <= ${native.version} natively); use the newest index at or below ${tag} that PyTorch lists for your torch version.`,
    commands: [
      `${python} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/${tag}`,
      checkCommand(facts),
    ],
  };
}
