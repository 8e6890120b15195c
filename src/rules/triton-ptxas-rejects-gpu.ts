/**
 * Triton compiles every kernel (torch.compile, flex_attention, vLLM's Triton kernels) with a
 * ptxas it bundles, and that ptxas may be older than the GPU: triton 3.5's ptxas (CUDA 12.8)
 * does not know sm_121a (DGX Spark, triton-lang/triton#8539) or sm_103a (B300), and triton 3.6's
 * ptxas-blackwell (CUDA 12.9) does not know sm_110a (Jetson Thor,
 * triton-inference-server/server#8632). The first kernel then fails with "ptxas fatal : Value
 * 'sm_121a' is not defined for option 'gpu-name'".
 *
 * Which binary Triton runs is read from the installed triton (probe.py start_jit_toolchain): its
 * compiler.py picks ptxas-blackwell for arch >= 100 where it has one (triton >= 3.6); the
 * TRITON_<TOOL>_PATH variable replaces the bundled binary when what it names runs, else Triton
 * quietly falls back to the bundled one (triton/knobs.py env_nvidia_tool). Each ptxas was asked
 * its --gpu-name list, so the verdict is the binary's own answer.
 */
import type { JitToolchainFacts, PtxasToolFacts } from "../facts/schema.js";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { deviceCapabilities } from "../rule-helpers/view.js";
import { oldestTritonFor, tritonGpuName } from "../kb/queries/triton-ptxas.js";
import type { ComputeCapability } from "../kb/compat.js";

interface Selection {
  /** The tool Triton asks for this arch: ptxas, ptxas-blackwell, ptxas-thor. */
  tool: string;
  variable: string;
  /** What Triton runs: the variable's binary if it runs, else the bundled one; null: neither. */
  used: PtxasToolFacts | null;
  /** The variable is set but what it names does not run (Triton falls back without a word). */
  ignoredVariable: PtxasToolFacts | null;
}

function variableOf(tool: string): string {
  return `TRITON_${tool.toUpperCase().replace(/-/g, "_")}_PATH`;
}

/** Triton's choice for a capability (compiler.py get_ptxas, knobs.py env_nvidia_tool). */
function selection(jit: JitToolchainFacts, cc: ComputeCapability): Selection {
  const arch = cc.major * 10 + cc.minor;
  const triton = jit.triton!;
  const tool =
    triton.thorPtxas && arch === 110
      ? "ptxas-thor"
      : triton.blackwellPtxas && arch >= 100
        ? "ptxas-blackwell"
        : "ptxas";
  const variable = variableOf(tool);
  const fromVariable = jit.ptxas.find((p) => p.role === "env" && p.variable === variable) ?? null;
  const bundled = jit.ptxas.find((p) => p.role === "bundled" && p.name === tool) ?? null;
  const runs = (p: PtxasToolFacts | null) => p !== null && p.exists && p.version !== null;
  if (runs(fromVariable)) return { tool, variable, used: fromVariable, ignoredVariable: null };
  return { tool, variable, used: runs(bundled) ? bundled : null, ignoredVariable: fromVariable };
}

/** Another ptxas of this machine that assembles the target: the toolkit's first. */
function replacement(
  jit: JitToolchainFacts,
  gpuName: string,
  used: PtxasToolFacts | null,
): PtxasToolFacts | null {
  const candidates = jit.ptxas.filter(
    (p) => p !== used && p.version !== null && p.gpuNames?.includes(gpuName),
  );
  return candidates.find((p) => p.role === "toolkit") ?? candidates[0] ?? null;
}

function describe(tool: PtxasToolFacts): string {
  const where = tool.role === "env" ? `${tool.variable}=${tool.path}` : tool.path;
  return `${where} (${tool.version ? `CUDA ${tool.version}` : "did not run"})`;
}

export const tritonPtxasRejectsGpu: Rule = {
  id: "triton-ptxas-rejects-gpu",
  title: "Triton's ptxas cannot compile for this GPU",
  severity: "error",
  check(facts) {
    const jit = facts.python.jitToolchain;
    if (!jit?.triton) return [];
    const findings = [];
    for (const { cc, name } of deviceCapabilities(facts)) {
      const gpuName = tritonGpuName(cc.major, cc.minor);
      const chosen = selection(jit, cc);
      const used = chosen.used;
      // A ptxas whose --help listed nothing is not judged (unknown, not broken).
      if (used && (used.gpuNames === null || used.gpuNames.includes(gpuName))) continue;
      const other = replacement(jit, gpuName, used);
      const newer = oldestTritonFor(cc.major, cc.minor);
      const fallback = chosen.ignoredVariable
        ? ` ${chosen.variable}=${chosen.ignoredVariable.path} is set, but ${chosen.ignoredVariable.exists ? "it does not run" : "no such file"}, so Triton falls back to its own.`
        : "";
      const otherVariables = jit.ptxas
        .filter((p) => p.role === "env" && p.variable !== chosen.variable)
        .map(
          (p) =>
            ` ${p.variable} is set, but this triton runs ${chosen.tool} for sm_${cc.major}${cc.minor}, which only ${chosen.variable} replaces.`,
        )
        .join("");
      const fails = used
        ? `Triton compiles every kernel for ${name} (${cc.major}.${cc.minor}) with --gpu-name=${gpuName} through ${describe(used)}, which does not know ${gpuName}`
        : `Triton finds no ${chosen.tool} for ${name} (${cc.major}.${cc.minor}): neither ${chosen.variable} nor a bundled ${chosen.tool} runs`;
      findings.push(
        makeFinding(this, {
          message:
            `${fails}: the first Triton kernel (torch.compile, flex_attention, vLLM's kernels) fails with ` +
            `"ptxas fatal : Value '${gpuName}' is not defined for option 'gpu-name'".${fallback}${otherVariables}`,
          evidence: [
            ev(
              "triton",
              `${jit.triton.version ?? "?"} at ${jit.triton.location}; uses ${chosen.tool} for sm_${cc.major}${cc.minor} (${chosen.variable} replaces it)`,
            ),
            ...jit.ptxas.map((p) =>
              ev(
                `${p.role} ${p.name}`,
                `${describe(p)}: ${p.gpuNames === null ? (p.error ?? "no --gpu-name list") : p.gpuNames.includes(gpuName) ? `accepts ${gpuName}` : `no ${gpuName}`}`,
              ),
            ),
          ],
          fix: other
            ? {
                summary: `Point Triton at a ptxas that knows ${gpuName}: ${describe(other)}.`,
                commands: [`export ${chosen.variable}=${other.path}`],
              }
            : {
                summary: newer
                  ? `Install triton ${newer.triton} or newer (its bundled ptxas knows ${gpuName}), or a CUDA toolkit whose ptxas does and set ${chosen.variable} to it.`
                  : `Install a CUDA toolkit whose ptxas knows ${gpuName} (CUDA 13.0 does) and set ${chosen.variable} to its bin/ptxas.`,
                commands: [`export ${chosen.variable}=/usr/local/cuda/bin/ptxas  # a CUDA 13.0+ toolkit`],
              },
          subject: "triton",
        }),
      );
    }
    return findings;
  },
};
