/** LD_LIBRARY_PATH puts another CUDA major's libraries ahead of the ones torch was built with. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { envVar } from "../rule-helpers/view.js";
import { versionParts } from "../util/version.js";

/** /usr/local/cuda-12.4/lib64, /opt/cuda-11.8/targets/... : the version in the directory name. */
const CUDA_DIR = /cuda-(\d+)\.(\d+)/;

export const ldLibraryPathForeignCuda: Rule = {
  id: "ld-library-path-foreign-cuda",
  title: "LD_LIBRARY_PATH points at another CUDA's libraries",
  severity: "warning",
  check(facts) {
    const torchCuda = facts.python.torch?.cudaVersion;
    const value = envVar(facts, "LD_LIBRARY_PATH");
    if (!torchCuda || !value) return [];
    const torchMajor = versionParts(torchCuda)[0];
    const foreign = value.split(":").filter((dir) => {
      const m = CUDA_DIR.exec(dir);
      return m !== null && Number(m[1]) !== torchMajor;
    });
    if (foreign.length === 0) return [];
    const kept = value.split(":").filter((dir) => !foreign.includes(dir));
    return [
      makeFinding(this, {
        message: `torch was built for CUDA ${torchCuda}, but LD_LIBRARY_PATH puts ${foreign.join(", ")} first: the loader can pick those libraries (cuBLAS, cuDNN, NCCL) over torch's own and fail with undefined symbols or "CUDA driver version is insufficient".`,
        evidence: [ev("torch CUDA", torchCuda), ev("LD_LIBRARY_PATH", value)],
        fix: {
          summary: "Drop the other CUDA's directories from LD_LIBRARY_PATH for this environment.",
          commands: [`export LD_LIBRARY_PATH=${kept.join(":")}`],
        },
      }),
    ];
  },
};
