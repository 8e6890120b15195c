/**
 * TORCH_CUDA_ARCH_LIST decides which GPU code a source build of torch or of an extension contains
 * (torch's cpp_extension, xformers, vLLM and others read it). A list that has nothing this GPU can
 * run builds fine and then fails with "no kernel image is available for execution on the device".
 * Which code runs where is kb/compat.ts's coverageFor; PTX that the driver can JIT counts as running.
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { deviceCapabilities, envVar } from "../rule-helpers/view.js";
import { coverageFor, formatComputeCapability } from "../kb/compat.js";
import {
  acceptedEntry,
  archListTargets,
  cppExtensionArchTable,
  meansVisibleGpus,
} from "../kb/torch-cuda-arch-list.js";

export const torchCudaArchListExcludesGpu: Rule = {
  id: "torch-cuda-arch-list-excludes-gpu",
  title: "TORCH_CUDA_ARCH_LIST has no code for this GPU",
  severity: "error",
  check(facts) {
    const value = envVar(facts, "TORCH_CUDA_ARCH_LIST");
    if (value === undefined) return [];
    const table = cppExtensionArchTable(facts.python.torch?.version ?? null);
    if (meansVisibleGpus(value.trim(), table)) return [];
    const targets = archListTargets(value, table);
    // A list with no entry of a known shape is torch-cuda-arch-list-invalid's to report.
    if (targets.length === 0) return [];
    const gpus = deviceCapabilities(facts);
    const uncovered = gpus.filter((gpu) => coverageFor(targets, gpu.cc).how === "none");
    if (uncovered.length === 0) return [];
    // The value that covers every GPU found: each one's own capability, which builds its SASS.
    const wanted = [...new Set(gpus.map((gpu) => formatComputeCapability(gpu.cc)))].sort(
      (a, b) => Number(a) - Number(b),
    );
    const unknownToTorch = table ? wanted.filter((cc) => !acceptedEntry(cc, table)) : [];
    const described = uncovered.map((gpu) => `${gpu.name} (${formatComputeCapability(gpu.cc)})`);
    return [
      makeFinding(this, {
        message: `TORCH_CUDA_ARCH_LIST=${JSON.stringify(value)} gives no code that runs on ${described.join(", ")}: anything built from source with it fails with "no kernel image is available for execution on the device".`,
        evidence: [
          ev("TORCH_CUDA_ARCH_LIST", JSON.stringify(value)),
          ev("code it builds", targets.join(" ")),
          ...gpus.map((gpu) =>
            ev(
              `GPU ${gpu.name}`,
              `${formatComputeCapability(gpu.cc)}: ${coverageFor(targets, gpu.cc).how === "none" ? "nothing in the list runs on it" : "covered"}`,
            ),
          ),
        ],
        fix: {
          summary:
            unknownToTorch.length > 0
              ? `Build for the GPUs found (${wanted.join(";")}); this torch's extension builder (table of torch ${table?.torch}) does not know ${unknownToTorch.join(", ")}, so a newer torch is needed first. Then rebuild the packages built with the old list.`
              : `Build for the GPUs found (${wanted.join(";")}), or unset it on a machine where they are visible (torch then builds for the visible GPUs); then rebuild the packages built with the old list.`,
          commands: [`export TORCH_CUDA_ARCH_LIST="${wanted.join(";")}"`, "unset TORCH_CUDA_ARCH_LIST"],
        },
      }),
    ];
  },
};
