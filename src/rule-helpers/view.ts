/** Small read-only views over Facts that many rules share, so each rule reads like its check. */
import type { Facts, GpuFacts, TorchLiveResult } from "../facts/schema.js";
import type { ComputeCapability } from "../kb/compat.js";
import { smiCapability, torchCapability } from "../facts/capability.js";

/** GPUs nvidia-smi listed (empty when there is no working driver). */
export function smiGpus(facts: Facts): GpuFacts[] {
  return facts.host.nvidia.status === "ok" ? facts.host.nvidia.gpus : [];
}

/** The host has an NVIDIA GPU: nvidia-smi lists one, or the kernel module is loaded. */
export function hostHasNvidiaGpu(facts: Facts): boolean {
  return smiGpus(facts).length > 0 || facts.host.nvidia.kernelModule !== null;
}

/** torch's live result when the child process that imported it finished. */
export function torchLive(facts: Facts): TorchLiveResult | null {
  return facts.python.torchLive.status === "ok" ? facts.python.torchLive.result : null;
}

export function envVar(facts: Facts, name: string): string | undefined {
  return facts.python.env[name];
}

/**
 * The variable NGC PyTorch images set to their release ("25.01"). Only this one: PYTORCH_BUILD_VERSION
 * is also set by anyone building torch from source, and NVIDIA_BUILD_ID by every NGC image.
 */
const NGC_MARKERS = ["NVIDIA_PYTORCH_VERSION"] as const;

/** The NGC PyTorch marker seen ("NVIDIA_PYTORCH_VERSION=25.01"), or null outside such an image. */
export function ngcMarker(facts: Facts): { name: string; value: string } | null {
  for (const name of NGC_MARKERS) {
    const value = envVar(facts, name);
    if (value !== undefined && value !== "") return { name, value };
  }
  return null;
}

/** Distinct device capabilities: from torch when it saw devices, else from nvidia-smi. */
export function deviceCapabilities(facts: Facts): { cc: ComputeCapability; name: string }[] {
  const seen = new Map<string, { cc: ComputeCapability; name: string }>();
  const live = torchLive(facts);
  for (const device of live?.devices ?? []) {
    const cc = torchCapability(device);
    seen.set(`${cc.major}.${cc.minor}`, { cc, name: device.name });
  }
  for (const gpu of smiGpus(facts)) {
    const cc = smiCapability(gpu);
    if (cc && !seen.has(`${cc.major}.${cc.minor}`))
      seen.set(`${cc.major}.${cc.minor}`, { cc, name: gpu.name });
  }
  return [...seen.values()];
}

/** "NVIDIA H100 80GB HBM3 (9.0)" for messages. */
export function describeGpus(facts: Facts): string {
  const gpus = smiGpus(facts);
  if (gpus.length === 0) return "none";
  return gpus
    .map((g) => `${g.index}: ${g.name}${g.computeCapability ? ` (${g.computeCapability})` : ""}`)
    .join("; ");
}

/** Shell-quote one argument for a printed command. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The interpreter as the user should type it in a fix. */
export function pythonCmd(facts: Facts): string {
  // A machine named from the KB (doctor --target) has no interpreter gathered: the project's own.
  if (facts.target.python === "(none)") return "python";
  return shellQuote(facts.python.interpreter.executable);
}
