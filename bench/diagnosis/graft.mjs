// GPU sides for the cases that need a GPU this machine lacks. doctor has no --target/--gpu option,
// so such a case is diagnosed from a snapshot (--from): either the environment built here, saved
// with --save, given the GPU host of a real capture (test/fixtures/facts), or a real capture with
// one field changed. Every case says which (cases.mjs, `how`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./build.mjs";

const CAPTURES = join(ROOT, "test/fixtures/facts");

/** Snapshots are plain JSON: a JSON round trip is a deep copy. */
const clone = (value) => JSON.parse(JSON.stringify(value));

export function loadCapture(name) {
  return JSON.parse(readFileSync(join(CAPTURES, `${name}.json`), "utf8"));
}

/** GPUs the captures do not have: the capture's GPU renamed, as test/doctor/captures.ts does. */
export const GPUS = {
  h100: null,
  rtx5090: { name: "NVIDIA GeForce RTX 5090", cc: "12.0", cpuArch: "x86_64" },
  gb10: { name: "NVIDIA GB10", cc: "12.1", cpuArch: "aarch64" },
  gtx1080: { name: "NVIDIA GeForce GTX 1080", cc: "6.1", cpuArch: "x86_64" },
};

/** Renames every GPU of a snapshot (nvidia-smi's list and torch's devices) to another model. */
export function renameGpus(facts, gpu) {
  if (!gpu) return;
  const [major, minor] = gpu.cc.split(".").map(Number);
  facts.host.cpuArch = gpu.cpuArch;
  // Memory and identity of the captured card do not carry over to another model.
  facts.host.nvidia.gpus = facts.host.nvidia.gpus.map((g) => ({
    ...g,
    name: gpu.name,
    computeCapability: gpu.cc,
    memoryTotalMiB: null,
    uuid: null,
  }));
  const live = facts.python.torchLive.result;
  if (live) live.devices = live.devices.map((d) => ({ ...d, name: gpu.name, capability: [major, minor] }));
}

/**
 * The environment built here, on the GPU host of a real capture: host.nvidia (driver, GPUs) and
 * host.ulimits (this VM's 8 MiB memlock would otherwise add memlock-limited, true for this VM but
 * not the case's cause; `keepUlimits` keeps this VM's, for the memlock case). With `torch`, the capture's torch (2.11.0+cu130, its live import result)
 * replaces Debian's CPU-only 1.13, so the case is about its own cause and not about cpu-only-torch.
 */
export function onGpuHost(
  local,
  { source = "h100-healthy", torch = true, gpu = null, torchCuda = null, keepUlimits = false },
) {
  const capture = loadCapture(source);
  const facts = clone(local);
  facts.host.nvidia = clone(capture.host.nvidia);
  if (!keepUlimits) facts.host.ulimits = clone(capture.host.ulimits);
  if (torch) {
    facts.python.torch = clone(capture.python.torch);
    facts.python.torchLive = clone(capture.python.torchLive);
    if (torchCuda) withTorchCuda(facts, torchCuda);
  }
  renameGpus(facts, gpu);
  return facts;
}

/** torch built for another CUDA (version tag and CUDA fields together): no capture has one. */
export function withTorchCuda(facts, { version, cuda }) {
  facts.python.torch.version = version;
  facts.python.torch.cudaVersion = cuda;
  const live = facts.python.torchLive.result;
  if (live) {
    live.version = version;
    live.cudaBuilt = cuda;
  }
}

/** A real capture with one part changed by `patch`. */
export function fromCapture(name, patch = () => {}) {
  const facts = clone(loadCapture(name));
  patch(facts);
  return facts;
}
