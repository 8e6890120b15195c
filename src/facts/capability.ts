/**
 * The compute capability in Facts, as a value. nvidia-smi writes it as text ("9.0", its compute_cap
 * column, kept as text in the snapshot); torch gives a (major, minor) pair. These two readers are the
 * edge where a snapshot's capability becomes a ComputeCapability for the rules, the planner and scan.
 */
import { parseComputeCapability, type ComputeCapability } from "../vocabulary/compute-capability.js";

/** nvidia-smi's capability of one GPU; null where the driver gave none, or something that is not one. */
export function smiCapability(gpu: { computeCapability: string | null }): ComputeCapability | null {
  return gpu.computeCapability ? parseComputeCapability(gpu.computeCapability) : null;
}

/** torch's torch.cuda.get_device_capability() pair of one device. */
export function torchCapability(device: { capability: readonly [number, number] }): ComputeCapability {
  return { major: device.capability[0], minor: device.capability[1] };
}
