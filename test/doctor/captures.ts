/** Loading the real facts snapshots under test/fixtures/facts for the table-driven suites. */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readFactsFile } from "../../src/facts/io.js";
import { FactsSchema, type Facts } from "../../src/facts/schema.js";

/** dist/test/doctor -> the repository's test/fixtures/facts (fixtures are not copied into dist). */
export const CAPTURES_DIR = fileURLToPath(new URL("../../../test/fixtures/facts/", import.meta.url));

export function capturePath(name: string): string {
  return `${CAPTURES_DIR}${name}.json`;
}

export function loadCapture(name: string): Facts {
  return readFactsFile(capturePath(name));
}

export function captureNames(): string[] {
  return readdirSync(CAPTURES_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

/**
 * A real capture with one part changed: `patch` edits a copy, and the result must still be a valid
 * snapshot. Every derived case below is listed in test/fixtures/facts/README.md with what it changes.
 */
export function derive(captureName: string, patch: (facts: Facts) => void): Facts {
  const facts = structuredClone(loadCapture(captureName));
  patch(facts);
  return FactsSchema.parse(facts);
}

/**
 * The GPU side of a host, from the real H100 capture (driver 580.159.04, CUDA 13.0), with its one
 * GPU renamed to another model and capability: gpuprep has no capture of these GPUs.
 */
function hostWithGpu(facts: Facts, name: string, computeCapability: string, cpuArch: string): void {
  const nvidia = structuredClone(loadCapture("h100-healthy").host.nvidia);
  // Its memory and PCI details are the H100's: cleared rather than carried over to another GPU.
  nvidia.gpus = nvidia.gpus.map((gpu) => ({
    ...gpu,
    name,
    computeCapability,
    memoryTotalMiB: null,
    uuid: null,
  }));
  facts.host.nvidia = nvidia;
  facts.host.cpuArch = cpuArch;
}

export const onGb10 = (facts: Facts) => hostWithGpu(facts, "NVIDIA GB10", "12.1", "aarch64");
export const onRtx5090 = (facts: Facts) => hostWithGpu(facts, "NVIDIA GeForce RTX 5090", "12.0", "x86_64");
export const onH100 = (facts: Facts) => hostWithGpu(facts, "NVIDIA H100 80GB HBM3", "9.0", "x86_64");
/** The project of another real capture, in place of this capture's (no) project. */
export const withProjectOf = (captureName: string) => (facts: Facts) => {
  facts.project = loadCapture(captureName).project;
};

/** One environment variable set (or replaced) as the probe would have captured it. */
export const withEnv = (name: string, value: string) => (facts: Facts) => {
  facts.python.env[name] = value;
};
/** The toolkit fact of another real capture (made with CUDA_HOME at this machine's real CUDA 13.0). */
export const withToolkitOf = (captureName: string) => (facts: Facts) => {
  facts.python.toolkit = loadCapture(captureName).python.toolkit;
};
/** A toolkit at CUDA_HOME of another release, as the probe reports one (home, its bin/nvcc, `release X.Y`). */
export const withCudaHome = (release: string) => (facts: Facts) => {
  const home = `/usr/local/cuda-${release}`;
  facts.python.toolkit = { home, source: "CUDA_HOME", nvcc: `${home}/bin/nvcc`, release, error: null };
};
/** No toolkit found: what the probe reports when CUDA_HOME, CUDA_PATH, nvcc on PATH and /usr/local/cuda are all absent. */
export const withoutToolkit = (facts: Facts) => {
  facts.python.toolkit = { home: null, source: null, nvcc: null, release: null, error: null };
};
const both =
  (...patches: ((facts: Facts) => void)[]) =>
  (facts: Facts) => {
    for (const patch of patches) patch(facts);
  };

/** Derived cases: name -> the capture and the change (README.md says the same in words). */
export const DERIVED: Record<string, () => Facts> = {
  "pixi-gb10-conda-forge-on-gb10": () => derive("pixi-gb10-conda-forge-project", onGb10),
  "pixi-gb10-conda-forge-on-h100": () => derive("pixi-gb10-conda-forge-project", onH100),
  "torch-pinned-on-rtx5090": () => derive("torch-pinned-project", onRtx5090),
  "torch-pinned-on-h100": () => derive("torch-pinned-project", onH100),
  "project-pins-torch-2.5.1-on-gb10": () => derive("project-pins-torch-2.5.1", onGb10),
  "pixi-pypi-cu124-on-rtx5090": () => derive("pixi-pypi-cu124-project", onRtx5090),
  "conda-pytorch-channel-on-rtx5090": () => derive("conda-pytorch-channel-project", onRtx5090),
  "conda-pytorch-channel-on-h100": () => derive("conda-pytorch-channel-project", onH100),
  "conda-pytorch-channel-on-gb10": () => derive("conda-pytorch-channel-project", onGb10),
  "h100-fast-requirements-cu126-pin": () =>
    derive("h100-fast", withProjectOf("requirements-cu126-pin-project")),
  "h100-fast-torch-pinned": () => derive("h100-fast", withProjectOf("torch-pinned-project")),
  "h100-cuda-launch-blocking": () => derive("h100-healthy", withEnv("CUDA_LAUNCH_BLOCKING", "1")),
  "h100-cuda-module-loading-eager": () => derive("h100-healthy", withEnv("CUDA_MODULE_LOADING", "EAGER")),
  "debian-torch-no-cuda-memory-caching-0": () =>
    derive("debian-torch-cpu", withEnv("PYTORCH_NO_CUDA_MEMORY_CACHING", "0")),
  "h100-arch-list-ampere-numbers": () =>
    derive("h100-healthy", withEnv("TORCH_CUDA_ARCH_LIST", "7.0 7.5 8.0 8.6")),
  "h100-arch-list-ampere-name": () => derive("h100-healthy", withEnv("TORCH_CUDA_ARCH_LIST", "Ampere")),
  "h100-arch-list-commas": () => derive("h100-healthy", withEnv("TORCH_CUDA_ARCH_LIST", "8.0,9.0")),
  "debian-torch-arch-list-9.0": () => derive("debian-torch-cpu", withEnv("TORCH_CUDA_ARCH_LIST", "9.0")),
  "h200x2-nccl-p2p-disabled": () => derive("h200x2-healthy", withEnv("NCCL_P2P_DISABLE", "1")),
  "h100-nccl-p2p-disabled": () => derive("h100-healthy", withEnv("NCCL_P2P_DISABLE", "1")),
  "h100-healthy-cuda-home-12.8": () => derive("h100-healthy", withCudaHome("12.8")),
  "h100-healthy-cuda-home-13.0": () => derive("h100-healthy", withToolkitOf("debian-venv-torchvision-pin")),
  "xformers-aarch64-on-gb10": () => derive("xformers-aarch64-project", onGb10),
  "xformers-aarch64-on-gb10-no-toolkit": () =>
    derive("xformers-aarch64-project", both(onGb10, withoutToolkit)),
};
