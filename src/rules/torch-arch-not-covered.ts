/**
 * The GPU's compute capability against torch.cuda.get_arch_list(), with the real CUDA rules
 * (kb/compat.ts): SASS runs on the same major with an equal or higher minor, 'a' code only on
 * its exact capability, PTX is JIT-compiled for newer GPUs at a first-run cost.
 */
import type { Finding, Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { coverageFor, formatComputeCapability, smName } from "../kb/compat.js";
import { deviceCapabilities, torchLive } from "../rule-helpers/view.js";
import { torchBuildAdvice } from "../rule-helpers/torch-build-advice.js";

export const torchArchNotCovered: Rule = {
  id: "torch-arch-not-covered",
  title: "torch has no kernels compiled for this GPU",
  severity: "error",
  check(facts, kb) {
    const live = torchLive(facts);
    if (!live || live.cudaBuilt === null || live.archList.length === 0) return [];
    const findings: Finding[] = [];
    for (const { cc, name } of deviceCapabilities(facts)) {
      const verdict = coverageFor(live.archList, cc);
      if (verdict.how === "sass") continue;
      const ccText = formatComputeCapability(cc);
      const arch = kb.arch(ccText);
      const gpu = `${name} (compute capability ${ccText}${arch ? `, ${arch.architecture}` : ""})`;
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
      if (verdict.how === "ptx-jit") {
        findings.push(
          makeFinding(this, {
            severity: "warning",
            message:
              `torch ${live.version} has no ${smName(cc)} kernels for ${gpu}; it runs only by JIT-compiling ` +
              `${verdict.via[0]} PTX in the driver, which costs minutes on first use of each kernel and ` +
              `can be slower than native code.`,
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
        makeFinding(this, {
          message:
            `torch ${live.version} was compiled for ${live.archList.join(", ")}, none of which can run on ${gpu}: ` +
            `CUDA kernels fail with "no kernel image is available for execution on the device".`,
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
