/**
 * What to install instead, in one place: every rule that ends in "install another torch" asks
 * here, so the advice improves in one spot as the knowledge base learns PyTorch builds.
 * Today it knows the driver's newest native CUDA (kb.newestNativeCuda); it names the PyTorch
 * wheel index for a CUDA version by PyTorch's own URL scheme (https://pytorch.org/get-started/locally/).
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { pythonCmd } from "./view.js";

export interface TorchAdvice {
  summary: string;
  commands: string[];
}

/** "13.0" -> "cu130", PyTorch's wheel index naming. */
export function cudaIndexTag(cudaVersion: string): string {
  const [major = "0", minor = "0"] = cudaVersion.split(".");
  return `cu${major}${minor}`;
}

/**
 * Advice for a torch that runs CUDA on this machine. `needArch` is the sm_ target the build must
 * contain (when the problem is arch coverage).
 */
export function torchBuildAdvice(facts: Facts, kb: KnowledgeBase, needArch: string | null): TorchAdvice {
  const driver = facts.host.nvidia.driverVersion;
  const native = driver ? kb.newestNativeCuda(driver) : null;
  const python = pythonCmd(facts);
  const check = `${python} -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list())"`;
  const archPart = needArch ? ` whose torch.cuda.get_arch_list() includes ${needArch}` : "";
  if (!native) {
    return {
      summary: `Install a CUDA build of torch${archPart} for a CUDA version this driver runs (update the driver if it is older than the build needs).`,
      commands: [`${python} -m pip uninstall -y torch`, `${python} -m pip install torch`, check],
    };
  }
  const tag = cudaIndexTag(native.version);
  return {
    summary:
      `Install a CUDA build of torch${archPart}, built for CUDA ${native.version} or older ` +
      `(driver ${driver} runs CUDA <= ${native.version} natively); PyTorch publishes them per CUDA at ` +
      `https://download.pytorch.org/whl/cuXYZ: use the newest one at or below ${tag} that PyTorch lists for your torch version.`,
    commands: [
      `${python} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/${tag}`,
      check,
    ],
  };
}
