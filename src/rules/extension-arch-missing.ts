/**
 * A library with CUDA code (an extension or a CUDA library outside torch) that has neither SASS
 * nor PTX this GPU can run: the first call into it fails with "no kernel image is available for
 * execution on the device", usually long after import. Read from the binaries themselves.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { archListFor, binaryVerdicts, describeFile } from "../rule-helpers/binary-coverage.js";
import { normalizeName } from "../util/package-name.js";
import { distributionOf, reinstallCommands } from "../rule-helpers/reinstall-fix.js";

export const extensionArchMissing: Rule = {
  id: "extension-arch-missing",
  title: "An extension has no GPU code for this GPU",
  severity: "error",
  check(facts) {
    const missing = binaryVerdicts(facts).filter((v) => v.owner !== "torch" && v.verdict.how === "none");
    const byOwner = new Map<string, typeof missing>();
    for (const v of missing)
      byOwner.set(`${v.owner}|${v.device.name}`, [...(byOwner.get(`${v.owner}|${v.device.name}`) ?? []), v]);
    const python = facts.target.python;
    const findings: Finding[] = [];
    for (const group of byOwner.values()) {
      const { owner, device } = group[0]!;
      const sm = `sm_${device.cc.major}${device.cc.minor}`;
      const dist = distributionOf(facts, owner);
      findings.push(
        makeFinding(this, {
          message: `${owner} has CUDA code for other GPUs only: none of its ${group.length} CUDA ${group.length === 1 ? "library runs" : "libraries run"} on the ${device.name} (${sm}); its kernels fail with "no kernel image is available for execution on the device".`,
          evidence: [
            ev("GPU", `${device.name} (${archListFor(device.cc)})`),
            ...group.slice(0, 5).map((v) => ev("library", describeFile(v.file))),
            ...(group.length > 5 ? [ev("more libraries", String(group.length - 5))] : []),
          ],
          fix: {
            summary: `Install a build of ${dist.name} that includes ${sm}, or rebuild it from source for exactly this GPU (its published wheel would bring the same binaries back).`,
            commands: [
              ...reinstallCommands(facts, {
                name: dist.name,
                version: dist.version,
                sourceBuild: { gpu: device.cc },
                noDeps: true,
              }),
              `gpuprep scan --python ${python} --gpu ${sm}   # check the result`,
            ],
          },
          // The same cause extension-import-failed names from a "no kernel image" import: merged.
          cause: "arch-missing",
          subject: normalizeName(dist.name),
        }),
      );
    }
    return findings;
  },
};
