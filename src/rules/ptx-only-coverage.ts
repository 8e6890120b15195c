/**
 * Libraries that run on this GPU only through PTX JIT: the driver compiles their PTX at first load
 * (seconds to many minutes for a large library), every time the JIT cache is cold or too small,
 * and the JIT code can be slower than a native build. Runs, so a warning.
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { binaryVerdicts } from "../rule-helpers/binary-coverage.js";

export const ptxOnlyCoverage: Rule = {
  id: "ptx-only-coverage",
  title: "Some CUDA code runs on this GPU only after PTX JIT compilation",
  severity: "warning",
  check(facts) {
    const jit = binaryVerdicts(facts).filter((v) => v.verdict.how === "ptx-jit");
    if (jit.length === 0) return [];
    const device = jit[0]!.device;
    const sm = `sm_${device.cc.major}${device.cc.minor}`;
    const owners = [...new Set(jit.map((v) => v.owner))];
    return [
      makeFinding(this, {
        message: `${jit.length} CUDA ${jit.length === 1 ? "library" : "libraries"} (${owners.join(", ")}) carry no ${sm} SASS, only PTX: the driver JIT-compiles it on first use, which can take minutes and repeats whenever the compute cache is cold.`,
        evidence: [
          ev("GPU", `${device.name} (${device.cc.major}.${device.cc.minor})`),
          ...jit.slice(0, 5).map((v) => ev("library", `${v.file.path} via ${v.verdict.via[0]}`)),
          ev("CUDA_CACHE_MAXSIZE", facts.python.env["CUDA_CACHE_MAXSIZE"] ?? "(unset: the driver default)"),
          ev("CUDA_CACHE_PATH", facts.python.env["CUDA_CACHE_PATH"] ?? "(unset: ~/.nv/ComputeCache)"),
        ],
        fix: {
          summary: `Install builds with ${sm} SASS where they exist; until then keep a large, persistent JIT cache (a volume in containers) so the compilation happens once.`,
          commands: [
            "export CUDA_CACHE_MAXSIZE=4294967296   # 4 GiB",
            "export CUDA_CACHE_PATH=$HOME/.cache/nv-compute   # mount it as a volume in containers",
          ],
        },
      }),
    ];
  },
};
