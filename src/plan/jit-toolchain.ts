/**
 * Triton on a new GPU (issue 22 item 7): triton ships no kernels, it compiles them on first use
 * with the ptxas its wheel bundles, for sm_<cc>a (sm_121a on GB10). A bundled ptxas older than
 * the architecture fails there ("ptxas fatal: Value 'sm_121a' is not defined for option
 * 'gpu-name'"). The fix is a ptxas that knows it, the CUDA toolkit's, through TRITON_PTXAS_PATH
 * (triton's knobs) — never a triton built from a PyPI sdist, which does not exist.
 */
import { toolkitSources, type KnowledgeBase } from "../kb/index.js";
import type { Decision, JitToolchain } from "./types.js";
import { smDigits, type ComputeCapability } from "../vocabulary/compute-capability.js";

/** The ptxas triton's wheels bundle, as the KB's triton row reads it (cmake/nvidia-toolchain-version.json). */
const TRITON_BUNDLED_PTXAS = {
  cuda: "12.8",
  source:
    "https://github.com/triton-lang/triton/blob/01f1ba95acf5a34902f0107ea1f29a8c7ed7ab2c/cmake/nvidia-toolchain-version.json",
};
const NO_SDIST_SOURCE = "https://github.com/triton-lang/triton/issues/8380";
const KNOBS_SOURCE =
  "https://github.com/triton-lang/triton/blob/00c7dbd4070eb07192dd047bc88f19ba310f9dfd/python/triton/knobs.py";

/** Triton's target name: sm_<cc>, with the 'a' suffix from 9.0 on (compiler.py, KB triton row). */
function tritonTarget(cc: ComputeCapability): { sm: string; target: string } {
  const sm = smDigits(cc);
  return { sm, target: Number(sm) >= 90 ? `sm_${sm}a` : `sm_${sm}` };
}

/**
 * The TRITON_PTXAS_PATH the plan sets, or null where triton's bundled ptxas compiles for the GPU.
 * @param asked the user asked --build-from-source triton: answered with the ptxas route either way.
 */
export function decideJitToolchain(
  kb: KnowledgeBase,
  computeCapability: ComputeCapability,
  strategy: "container" | "native",
  asked: boolean,
): { toolchain: JitToolchain; decision: Decision } | null {
  const { sm, target } = tritonTarget(computeCapability);
  const bundled = kb.cudaToolkit(TRITON_BUNDLED_PTXAS.cuda);
  const bundledKnows = bundled?.sassTargets?.includes(sm) ?? false;
  if (bundledKnows && !asked) return null;
  const knowing = kb.data.cudaToolkits.find((row) => row.sassTargets?.includes(sm));
  if (!knowing) return null;
  const ptxasPath = strategy === "container" ? "/usr/local/cuda/bin/ptxas" : null;
  const sources = [
    TRITON_BUNDLED_PTXAS.source,
    KNOBS_SOURCE,
    ...(asked ? [NO_SDIST_SOURCE] : []),
    ...toolkitSources(knowing, ["sassTargets"]),
  ];
  const why = bundledKnows
    ? `triton's bundled ptxas (CUDA ${TRITON_BUNDLED_PTXAS.cuda}) already compiles ${target}; the toolkit's ptxas is set anyway since triton was asked for`
    : `triton compiles its kernels for ${target} with the ptxas its wheel bundles (CUDA ${TRITON_BUNDLED_PTXAS.cuda}), which does not know that architecture; CUDA ${knowing.version} is the oldest toolkit whose ptxas does`;
  return {
    toolchain: {
      ptxasPath,
      target,
      minimumCuda: knowing.version,
      variables: ["TRITON_PTXAS_PATH", ...(Number(sm) >= 100 ? ["TRITON_PTXAS_BLACKWELL_PATH"] : [])],
    },
    decision: {
      topic: "triton ptxas",
      choice: `TRITON_PTXAS_PATH=${ptxasPath ?? "the CUDA toolkit's ptxas (found by the setup script)"}`,
      reason:
        `${why}; triton reads TRITON_PTXAS_PATH (knobs.py), so the toolkit's ptxas is used and triton is not rebuilt` +
        (asked
          ? " (--build-from-source triton: PyPI has no triton sdist to build from, and a build would bundle the same ptxas)"
          : "") +
        `; the setup checks that this ptxas knows ${target} before anything runs`,
      sources,
    },
  };
}
