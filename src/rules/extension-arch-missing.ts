/**
 * A library with CUDA code (an extension or a CUDA library outside torch) that has neither SASS
 * nor PTX this GPU can run: the first call into it fails with "no kernel image is available for
 * execution on the device", usually long after import. Read from the binaries themselves.
 */
import type { Finding, Rule } from "./types.js";
import { ev, makeFinding } from "./finding.js";
import { archListFor, binaryVerdicts, describeFile } from "./binary-coverage.js";

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
      findings.push(
        makeFinding(this, {
          message: `${owner} has CUDA code for other GPUs only: none of its ${group.length} CUDA ${group.length === 1 ? "library runs" : "libraries run"} on the ${device.name} (${sm}); its kernels fail with "no kernel image is available for execution on the device".`,
          evidence: [
            ev("GPU", `${device.name} (${archListFor(device.cc)})`),
            ...group.slice(0, 5).map((v) => ev("library", describeFile(v.file))),
            ...(group.length > 5 ? [ev("more libraries", String(group.length - 5))] : []),
          ],
          fix: {
            summary: `Install a build of ${owner} that includes ${sm}, or rebuild it from source for exactly this GPU.`,
            commands: [
              `TORCH_CUDA_ARCH_LIST="${archListFor(device.cc)}" MAX_JOBS=4 ${python} -m pip install --no-build-isolation --no-binary ${owner} --force-reinstall ${owner}`,
              `gpuprep scan --python ${python} --gpu ${sm}   # check the result`,
            ],
          },
        }),
      );
    }
    return findings;
  },
};
