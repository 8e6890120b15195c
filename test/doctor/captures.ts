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
export const onB200 = (facts: Facts) => hostWithGpu(facts, "NVIDIA B200", "10.0", "x86_64");
export const onThor = (facts: Facts) => hostWithGpu(facts, "NVIDIA Thor", "11.0", "aarch64");
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
/**
 * The same host with its one GPU a Tesla V100 (7.0), in nvidia-smi and in torch's device list, and
 * torch's kernel check failing the way torch 2.11+cu130 fails there: CUDA 13 builds have no sm_70.
 * Its memory and SM count are the V100's nominal 32 GiB and 80; gpuprep has no V100 capture.
 */
const onV100WithTorch = (facts: Facts) => {
  const name = "Tesla V100-SXM2-32GB";
  facts.host.nvidia.gpus = facts.host.nvidia.gpus.map((gpu) => ({
    ...gpu,
    name,
    computeCapability: "7.0",
    memoryTotalMiB: null,
    uuid: null,
  }));
  const live = facts.python.torchLive.result!;
  live.devices = live.devices.map((d) => ({
    ...d,
    name,
    capability: [7, 0] as [number, number],
    totalMemoryBytes: 32 * 1024 ** 3,
    multiProcessorCount: 80,
  }));
  live.kernel = {
    ran: true,
    ok: false,
    error: "CUDA error: no kernel image is available for execution on the device",
  };
};

/** Inside an NGC PyTorch 25.09 image: its marker variable, and its pip constraint on torch. */
const inNgc2509 = (facts: Facts) => {
  facts.python.env["NVIDIA_PYTORCH_VERSION"] = "25.09";
  const pin = "torch==2.9.0a0+50eac811a6.nv25.09";
  facts.python.constraintFiles = [
    {
      path: "/etc/pip/constraint.txt",
      origin: "NGC PyTorch image location",
      pins: [{ name: "torch", normalizedName: "torch", spec: pin.slice("torch".length), raw: pin }],
    },
  ];
};

/** A TRITON_*_PATH variable naming the capture's own toolkit ptxas (CUDA 13.0), as the probe records one. */
const withPtxasVariable = (variable: string) => (facts: Facts) => {
  const jit = facts.python.jitToolchain!;
  const toolkit = jit.ptxas.find((p) => p.role === "toolkit")!;
  facts.python.env[variable] = toolkit.path;
  jit.ptxas.push({
    ...toolkit,
    role: "env",
    variable,
    name: variable === "TRITON_PTXAS_PATH" ? "ptxas" : "ptxas-blackwell",
  });
};

/** Triton as 3.5.0 is laid out (triton-lang/triton#10331): the same ptxas 12.8.93, no ptxas-blackwell. */
const asTriton35 = (facts: Facts) => {
  const jit = facts.python.jitToolchain!;
  Object.assign(jit.triton!, { version: "3.5.0", blackwellPtxas: false });
  jit.ptxas = jit.ptxas.filter((p) => p.name !== "ptxas-blackwell");
};

/** The extension named `module` of a capture; the case is wrong if the capture lacks it. */
function extension(facts: Facts, module: string) {
  const ext = facts.python.extensions.find((e) => e.module === module);
  if (!ext) throw new Error(`the capture has no ${module} import`);
  return ext;
}

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
  "h100-healthy-on-v100": () => derive("h100-healthy", onV100WithTorch),
  "h100-healthy-on-v100-import-timeout": () =>
    derive("h100-healthy", (f) => {
      onV100WithTorch(f);
      f.python.torchLive = {
        ...f.python.torchLive,
        status: "timeout",
        exitCode: null,
        error: "no answer within 60.0s; killed",
        result: null,
      };
    }),
  "h100-healthy-kernel-out-of-memory": () =>
    derive("h100-healthy", (f) => {
      f.python.torchLive.result!.kernel = {
        ran: true,
        ok: false,
        error: "CUDA error: out of memory",
      };
    }),
  "h100-healthy-torch-import-error": () =>
    derive("h100-healthy", (f) => {
      // The error text of pytorch/pytorch#111469 as its reporter saw it (their path, not this venv's).
      f.python.torchLive = {
        ...f.python.torchLive,
        status: "error",
        exitCode: 1,
        error:
          "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
        result: null,
      };
    }),
  "h100-healthy-driver-535": () =>
    derive("h100-healthy", (f) => {
      f.host.nvidia.driverVersion = "535.104.05";
    }),
  "h100-healthy-in-ngc-25.09": () => derive("h100-healthy", inNgc2509),
  "torch-pinned-project-in-ngc-25.09": () =>
    derive("torch-pinned-project", (f) => {
      f.python.env["NVIDIA_PYTORCH_VERSION"] = "25.09";
    }),
  "h100-healthy-shm-64mib": () =>
    derive("h100-healthy", (f) => {
      f.host.shm = { sizeBytes: 64 * 1024 ** 2, freeBytes: 64 * 1024 ** 2 };
    }),
  "h100-healthy-memlock-64kib": () =>
    derive("h100-healthy", (f) => {
      f.host.ulimits.memlock = { soft: 64 * 1024, hard: 64 * 1024 };
    }),
  "h100-healthy-mig-enabled": () =>
    derive("h100-healthy", (f) => {
      for (const gpu of f.host.nvidia.gpus) gpu.migMode = "Enabled";
    }),
  "h100-healthy-ld-library-path-cuda-12.4": () =>
    derive("h100-healthy", (f) => {
      f.python.env["LD_LIBRARY_PATH"] = `/usr/local/cuda-12.4/lib64:${f.python.env["LD_LIBRARY_PATH"] ?? ""}`;
    }),
  "h100-healthy-sdpa-fast-off": () =>
    derive("h100-healthy", (f) => {
      const sdpa = f.python.torchLive.result!.sdpa;
      sdpa.flash = false;
      sdpa.efficient = false;
    }),
  "h100-healthy-cudf-pyarrow-error": () =>
    derive("h100-healthy", (f) => {
      f.python.extensions.push({
        status: "error",
        durationMs: 2100,
        exitCode: 1,
        signal: null,
        error:
          "ValueError: pyarrow.lib.IpcWriteOptions size changed, may indicate binary incompatibility. Expected 88 from C header, got 72 from PyObject",
        stderrTail: null,
        module: "cudf",
        distribution: "cudf-cu12",
        version: "24.12.0",
      });
    }),
  "debian-torch-cpu-numpy-in-user-site": () =>
    derive("debian-torch-cpu", (f) => {
      const numpy = f.python.distributions.find((d) => d.normalizedName === "numpy")!;
      numpy.location = f.python.interpreter.userSite!;
    }),
  "broken-extensions-xformers-leaves-process": () =>
    derive("broken-extensions", (f) => {
      extension(f, "xformers").leftProcesses = true;
    }),
  "h100-extension-sm80-with-ptx": () =>
    derive("h100-extension-sm80-only", (f) => {
      const lib = f.binaries.files.find((file) => file.path.includes("/xformers/"))!;
      lib.ptx = ["compute_80"];
      Object.assign(extension(f, "xformers"), { status: "ok", exitCode: 0, error: null });
    }),
  "h100-extension-sm80-undefined-symbol": () =>
    derive("h100-extension-sm80-only", (f) => {
      extension(f, "xformers").error =
        "ImportError: /tmp/gpuprep-states.GzQcOL/sm80-site/xformers/_sm80.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi";
    }),
  "h100-triton-3.6-on-thor": () => derive("h100-triton-3.6-fast", onThor),
  "h100-triton-3.6-on-gb10": () => derive("h100-triton-3.6-fast", onGb10),
  "h100-triton-3.6-on-thor-blackwell-path": () =>
    derive("h100-triton-3.6-fast", both(onThor, withPtxasVariable("TRITON_PTXAS_BLACKWELL_PATH"))),
  "h100-triton-3.6-on-thor-ptxas-path": () =>
    derive("h100-triton-3.6-fast", both(onThor, withPtxasVariable("TRITON_PTXAS_PATH"))),
  "h100-triton-3.5-layout-on-gb10": () => derive("h100-triton-3.6-fast", both(onGb10, asTriton35)),
  "debian-locked-wheels-on-h100": () => derive("debian-locked-wheels", onH100),
  "debian-locked-wheels-on-b200": () => derive("debian-locked-wheels", onB200),
  "debian-locked-wheels-unreachable": () =>
    derive("debian-locked-wheels", (facts) => {
      onH100(facts);
      const pkg = facts.lockScan!.locks[0]!.packages[0]!;
      Object.assign(pkg, {
        status: "unreachable",
        reason:
          "http://127.0.0.1:9/bwkit-1.0-py3-none-manylinux_2_17_x86_64.whl: connect ECONNREFUSED 127.0.0.1:9",
        sizeBytes: null,
        transfer: null,
        libraries: [],
      });
    }),
  "h100-cuda-unknown-error": () =>
    derive("h100-healthy", (facts) => {
      // torch's own message when cuInit fails with CUDA_ERROR_UNKNOWN (c10/cuda/CUDAFunctions.cpp).
      Object.assign(facts.python.torchLive.result!, {
        cudaAvailable: false,
        cudaInitError:
          "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
        deviceCount: 0,
        devices: [],
        kernel: { ran: false, ok: false, error: null },
      });
    }),
};
