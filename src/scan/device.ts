/**
 * The GPU `gpuprep scan` judges for, and the CPU of its wheels: named by capability or GPU name
 * (--gpu), by a GPU or system name (--target), read from a saved snapshot (--from) or from
 * nvidia-smi's list. Moved here from cli/scan.ts so the library's scanPaths callers name a device
 * the way the command does; the CLI parses the flags and calls these.
 */
import type { HostFacts } from "../facts/schema.js";
import { UserError } from "../errors.js";
import {
  formatComputeCapability,
  parseComputeCapability,
  smName,
  type ComputeCapability,
} from "../kb/compat.js";
import { smiCapability } from "../facts/capability.js";
import type { CpuArch } from "../remote/wheel-tags.js";
import type { ScanDevice as Device } from "../remote/scan-result.js";

/** What deviceFromGpus reads of gathered GPU facts (gather/gpus.ts's GpuListFacts has more). */
type GpuListFacts = Pick<HostFacts["nvidia"], "gpus">;

/** The first GPU of gathered facts (nvidia-smi's GPU 0, as judged before), when it has a capability. */
export function deviceFromGpus(nvidia: GpuListFacts, where: string): Device | null {
  const gpu = nvidia.gpus[0];
  const capability = gpu ? smiCapability(gpu) : null;
  return gpu && capability && gpu.name ? { label: `${gpu.name} (${where})`, capability } : null;
}

/** The GPU of a saved snapshot; the facts reader (zod) loads only here, never for a plain scan. */
export async function deviceFromSnapshot(path: string): Promise<Device> {
  const { readFactsFile } = await import("../facts/io.js");
  const device = deviceFromGpus(readFactsFile(path).host.nvidia, `from ${path}`);
  if (!device)
    throw new UserError(
      `scan: the snapshot ${path} has no GPU with a compute capability`,
      "give the GPU with --gpu NAME|sm_XY instead",
    );
  return device;
}

export async function deviceFromFlag(text: string): Promise<Device> {
  const capability = parseComputeCapability(text);
  // Loaded only for --gpu: the KB's schemas cost more start-up than scanning libtorch_cuda.so's
  // headers, and a plain scan never needs them.
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  if (capability) {
    // sm_999 parses, but no GPU has it: judging for it would say "cannot run" of everything.
    if (!kb.arch(capability))
      throw new UserError(
        `scan: --gpu ${text} is not a known architecture (compute capability ${formatComputeCapability(capability)})`,
        `known: ${kb.data.archs.map((row) => smName(kb.capabilityOf(row))).join(", ")}`,
      );
    return { label: smName(capability), capability };
  }
  const resolution = kb.resolveGpu(text);
  const row = resolution.match;
  if (!row) {
    const close = resolution.candidates.slice(0, 4).map((c) => c.name);
    throw new UserError(
      `scan: unknown GPU "${text}"`,
      close.length
        ? `did you mean: ${close.join(", ")}? (or give sm_XY / X.Y)`
        : "give a capability: sm_120 or 12.0",
    );
  }
  return { label: `${row.name} (${row.computeCapability})`, capability: kb.capabilityOf(row) };
}

/** A GPU or system by name (--target): its capability, CPU and, for a system, its driver's CUDA. */
export async function targetFromName(
  text: string,
): Promise<{ device: Device; arch: CpuArch | null; driverCuda: string | null }> {
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  const system = kb.system(text);
  const row = kb.resolveGpu(system?.gpu ?? text).match;
  if (!row) {
    const close = kb
      .resolveGpu(text)
      .candidates.slice(0, 4)
      .map((c) => c.name);
    throw new UserError(
      `scan: --target "${text}" is not a GPU or system gpuprep knows`,
      close.length ? `did you mean: ${close.join(", ")}?` : "see `gpuprep kb gpu NAME`",
    );
  }
  return {
    device: {
      label: `${system?.name ?? row.name} (${row.computeCapability})`,
      capability: kb.capabilityOf(row),
    },
    arch: row.hostCpuArch,
    driverCuda: system?.cuda ?? null,
  };
}

export async function knownCapabilities(): Promise<ComputeCapability[]> {
  const { loadKnowledgeBase } = await import("../kb/index.js");
  const kb = loadKnowledgeBase();
  return kb.data.gpus.map((g) => kb.capabilityOf(g));
}
