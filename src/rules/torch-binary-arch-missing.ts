/**
 * torch's own CUDA libraries (torch/lib/*.so) carry no code this GPU can run. Complements
 * torch-arch-not-covered (which reads get_arch_list() from a live import): this one reads the
 * binaries, so it also works with --from snapshots of a torch that would not even import.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { binaryVerdicts, describeFile } from "../rule-helpers/binary-coverage.js";
import { torchBuildAdvice } from "../rule-helpers/torch-build-advice.js";

export const torchBinaryArchMissing: Rule = {
  id: "torch-binary-arch-missing",
  title: "torch's CUDA libraries have no code for this GPU",
  severity: "error",
  check(facts, kb) {
    const missing = binaryVerdicts(facts).filter((v) => v.owner === "torch" && v.verdict.how === "none");
    const devices = new Map(missing.map((v) => [v.device.name, v.device]));
    const findings: Finding[] = [];
    for (const device of devices.values()) {
      const files = missing.filter((v) => v.device.name === device.name);
      const sm = `sm_${device.cc.major}${device.cc.minor}`;
      const advice = torchBuildAdvice(facts, kb, sm);
      findings.push(
        makeFinding(this, {
          message: `torch ${facts.python.torch?.version ?? ""} ships ${files.length} CUDA ${files.length === 1 ? "library" : "libraries"} with no ${sm}-compatible SASS or PTX: CUDA operations on the ${device.name} fail with "no kernel image is available for execution on the device".`,
          evidence: [
            ev("GPU", `${device.name} (${device.cc.major}.${device.cc.minor})`),
            ...files.slice(0, 4).map((v) => ev("library", describeFile(v.file))),
          ],
          fix: advice,
          cause: "arch-missing",
          subject: "torch",
        }),
      );
    }
    return findings;
  },
};
