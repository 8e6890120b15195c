/**
 * The GPU's compute capability against torch.cuda.get_arch_list(), with the real CUDA rules
 * (kb/compat.ts): SASS runs on the same major with an equal or higher minor, 'a' code only on
 * its exact capability, PTX is JIT-compiled for newer GPUs at a first-run cost.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, findingsOf } from "../findings/finding.js";
import { formatComputeCapability, smName } from "../kb/compat.js";
import { deviceCapabilities, torchLive } from "../rule-helpers/view.js";
import { torchBuildAdvice } from "../rule-helpers/torch-build-advice.js";
import { judgeTorchArch, TORCH_ARCH_NOT_COVERED } from "../judge/torch-arch.js";

export const torchArchNotCovered: Rule = {
  ...TORCH_ARCH_NOT_COVERED,
  check(facts, kb) {
    const live = torchLive(facts);
    if (!live) return [];
    const findings: Finding[] = [];
    for (const { cc, name } of deviceCapabilities(facts)) {
      const arch = kb.arch(cc);
      // Judged with validate's check.arch in src/judge/torch-arch.ts: the same verdict and words.
      const judgment = judgeTorchArch({
        torchVersion: live.version,
        archList: live.archList,
        gpu: { name, cc },
        architecture: arch?.architecture ?? null,
      });
      if (judgment.verdict === "pass" || judgment.verdict === "skip") continue;
      const gpu = `${name} (compute capability ${formatComputeCapability(cc)}${arch ? `, ${arch.architecture}` : ""})`;
      const evidence = [
        ev("GPU", gpu),
        ev("torch", `${live.version} (CUDA ${live.cudaBuilt})`),
        ev("torch.cuda.get_arch_list()", live.archList.join(" ")),
        ev("driver", facts.host.nvidia.driverVersion),
        ev("CPU architecture", facts.host.cpuArch),
      ];
      const archWarning = live.warnings.find((w) =>
        /not compatible with the current PyTorch installation/i.test(w),
      );
      if (archWarning) evidence.push(ev("torch warning", archWarning));
      const advice = torchBuildAdvice(facts, kb, smName(cc));
      if (judgment.coverage?.how === "ptx-jit") {
        findings.push(
          ...findingsOf(this, judgment, {
            evidence,
            fix: {
              summary: `${advice.summary} Until then, keep the JIT cache large enough to compile once.`,
              commands: [...advice.commands, "export CUDA_CACHE_MAXSIZE=4294967296"],
            },
          }),
        );
        continue;
      }
      findings.push(
        ...findingsOf(this, judgment, {
          evidence,
          fix: advice,
          // One cause with torch-binary-arch-missing and a "no kernel image" kernel launch: merged here.
          cause: "arch-missing",
          subject: "torch",
        }),
      );
    }
    return findings;
  },
};
