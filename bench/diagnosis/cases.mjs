// The broken environments of the diagnosis benchmark, each with the catalog entry it reproduces
// (docs/failures.md) and the rule doctor must report for it; and the healthy controls, on which
// doctor must report no error or warning.
//
// A case is one of:
//  - local: built here and diagnosed as it is (`doctor --python ... [--project ...]`);
//  - local+gpu: built here, saved with `doctor --save`, then given the GPU host of a real capture
//    (graft.mjs onGpuHost) and diagnosed with `doctor --from`: the machine has no GPU, and doctor
//    has no option to judge an environment against another GPU;
//  - capture: a real capture from test/fixtures/facts with one field changed (or none), `--from`.
//
// Fields: id, catalog (Fxx, or null where the rule has no catalog entry), expect (rule id; null for
// a control), minSeverity (of the expected finding; default warning), accept (rules for another,
// separate defect the environment has as built: numpy installed twice, other libraries without the
// GPU's code; a second finding for the case's own cause is never accepted: it counts as an extra,
// issue 15's "one root cause, one finding"), how (one line for the report), build(ctx)
// -> { python, project, env, args }, gpu (onGpuHost options), fastLocal (the local half of a
// local+gpu case runs with --fast: its cause is in variables or manifests, and the torch facts a
// full probe would add are replaced by the capture's), capture() -> facts.
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BUILDERS,
  DEBIAN_PYTHON,
  NUMPY1_INCLUDE,
  ROOT,
  SOURCES,
  cudart12Stub,
  gccExtension,
  installWheels,
  makeVenv,
  nvccLibrary,
  writeDistInfo,
  writeFiles,
} from "./build.mjs";
import { GPUS, fromCapture, renameGpus } from "./graft.mjs";

const NGC = { NVIDIA_PYTORCH_VERSION: "25.01" };
const NUMPY2_WHEEL = "/opt/pypi/files/numpy-2.2.6-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
const H100 = { source: "h100-healthy", torch: true };
const H200X2 = { source: "h200x2-healthy", torch: true };

/** A venv over Debian's torch with something added: one cause per venv. */
function venvOverDebian(ctx, name) {
  return makeVenv(ctx.dir(name), { systemSite: true });
}

/** A package directory with an __init__.py in a site-packages. */
function pkg(site, name, init = "") {
  writeFiles(site, { [`${name}/__init__.py`]: init });
  return join(site, name);
}

function debianWithEnv(env) {
  return (ctx) => ({ python: ctx.shared.debianVenv().python, env });
}

const controls = [
  {
    id: "control-debian-python",
    how: "Debian's /usr/bin/python3 (torch 1.13 CPU, numpy 1.24) as installed",
    build: () => ({ python: DEBIAN_PYTHON }),
  },
  {
    id: "control-venv-over-debian",
    how: "a --system-site-packages venv over Debian's torch",
    build: (ctx) => ({ python: ctx.shared.debianVenv().python }),
  },
  {
    id: "control-venv-without-torch",
    how: "a plain venv (no torch)",
    build: (ctx) => ({ python: ctx.shared.plainVenv().python }),
  },
  {
    id: "control-cuda-visible-devices-empty-no-gpu",
    how: 'CUDA_VISIBLE_DEVICES="" on this machine, which has no GPU: nothing is hidden',
    build: (ctx) => ({ python: ctx.shared.debianVenv().python, env: { CUDA_VISIBLE_DEVICES: "" } }),
  },
  {
    id: "control-project-pin-met",
    how: "Debian's python with a project whose pyproject asks for torch>=1.12 and numpy<2",
    build: (ctx) => ({
      python: DEBIAN_PYTHON,
      project: ctx.project("pin-met", {
        "pyproject.toml":
          '[project]\nname = "trainer"\nversion = "0.1.0"\ndependencies = ["torch>=1.12", "numpy<2"]\n',
      }),
    }),
  },
  {
    id: "control-h100-healthy",
    how: "h100-healthy.json as captured (torch 2.11.0+cu130 on an H100)",
    capture: () => fromCapture("h100-healthy"),
  },
  {
    id: "control-gpu-host-graft",
    how: "the venv over Debian given h100-healthy's GPU host and torch: the graft alone adds no finding",
    build: (ctx) => ({ python: ctx.shared.debianVenv().python }),
    gpu: H100,
  },
];

const install = [
  {
    id: "F01-cpu-torch-on-gpu-host",
    catalog: "F01",
    expect: "cpu-only-torch",
    how: "the venv over Debian's CPU-only torch 1.13, given h100-healthy's GPU host (torch kept)",
    build: (ctx) => ({ python: ctx.shared.debianVenv().python }),
    gpu: { source: "h100-healthy", torch: false },
  },
  {
    id: "F01-project-cpu-index",
    fastLocal: true,
    catalog: "F01",
    expect: "project-torch-cpu-only",
    how: "a venv without torch, project requirements.txt installing torch==2.5.1 from the cpu index; H100 host",
    build: (ctx) => ({
      python: ctx.shared.plainVenv().python,
      project: ctx.project("cpu-index", {
        "requirements.txt": "--index-url https://download.pytorch.org/whl/cpu\ntorch==2.5.1\n",
      }),
    }),
    gpu: { source: "h100-healthy", torch: false },
  },
  {
    id: "F05-project-pin-without-gpu-arch",
    fastLocal: true,
    catalog: "F05",
    expect: "project-torch-arch-not-covered",
    how: "a venv without torch, pyproject pinning torch==2.5.1 (PyPI: cu124, no sm_120); RTX 5090 host",
    build: (ctx) => ({
      python: ctx.shared.plainVenv().python,
      project: ctx.project("pin-2.5.1", {
        "pyproject.toml":
          '[project]\nname = "trainer"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["torch==2.5.1"]\n',
      }),
    }),
    gpu: { source: "h100-healthy", torch: false, gpu: GPUS.rtx5090 },
  },
  {
    id: "F10-project-pin-differs",
    catalog: "F10",
    expect: "project-torch-pin-mismatch",
    how: "Debian's python, requirements.txt with --extra-index-url cu124 and torch==2.5.1+cu124",
    build: (ctx) => ({
      python: DEBIAN_PYTHON,
      project: ctx.project("pin-cu124", {
        "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n",
      }),
    }),
  },
  {
    id: "F13-uv-route-replaces-torch",
    catalog: "F13",
    expect: "project-replaces-torch",
    how: "test/fixtures/projects/uv-cu126-route with its .venv made over Debian's torch",
    build: (ctx) => {
      const project = ctx.project("uv-route", {});
      copyFileSync(
        join(ROOT, "test/fixtures/projects/uv-cu126-route/pyproject.toml"),
        join(project, "pyproject.toml"),
      );
      return { python: makeVenv(join(project, ".venv"), { systemSite: true }).python, project };
    },
  },
  {
    id: "F13-uv-sync-in-ngc",
    catalog: "F13",
    expect: "uv-sync-replaces-torch",
    how: "the same uv project, run with NVIDIA_PYTORCH_VERSION=25.01 (an NGC image) and UV_NO_SYNC unset",
    build: (ctx) => {
      const project = ctx.project("uv-route-ngc", {});
      copyFileSync(
        join(ROOT, "test/fixtures/projects/uv-cu126-route/pyproject.toml"),
        join(project, "pyproject.toml"),
      );
      return { python: ctx.shared.debianVenv().python, project, env: NGC };
    },
  },
  {
    id: "F11-ngc-venv-hides-torch",
    catalog: "F11",
    expect: "ngc-torch-hidden",
    how: "a plain venv (no --system-site-packages) with NVIDIA_PYTORCH_VERSION=25.01",
    build: (ctx) => ({ python: ctx.shared.plainVenv().python, env: NGC }),
  },
  {
    id: "F12-ngc-constraint-violated",
    catalog: "F12",
    expect: "ngc-pip-constraint-not-applied",
    how: "Debian's python in an 'NGC image' whose PIP_CONSTRAINT file pins torch==2.6.0a0+ecf3bae40a",
    build: (ctx) => {
      const dir = ctx.project("ngc-constraint", {
        "constraint.txt": "torch==2.6.0a0+ecf3bae40a\nnumpy==1.26.4\n",
      });
      return { python: DEBIAN_PYTHON, env: { ...NGC, PIP_CONSTRAINT: join(dir, "constraint.txt") } };
    },
  },
  {
    id: "F06-xformers-pins-other-torch",
    catalog: "F06",
    expect: "installed-torch-pin-conflict",
    how: "venv over Debian + xformers 0.0.28.post3 dist-info with Requires-Dist: torch==2.5.1",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "xformers-pin");
      writeDistInfo(site, "xformers", "0.0.28.post3", { requires: ["torch==2.5.1", "numpy"] });
      return { python };
    },
  },
  {
    id: "F07-torchvision-for-other-torch",
    catalog: "F07",
    expect: "installed-torch-pin-conflict",
    how: "venv over Debian + torchvision 0.20.1 dist-info with Requires-Dist: torch==2.5.1",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "torchvision-pin");
      writeDistInfo(site, "torchvision", "0.20.1", {
        requires: ["numpy", "torch==2.5.1", "pillow!=8.3.*,>=5.3.0"],
      });
      return { python };
    },
  },
  {
    id: "F38-two-triton-distributions",
    catalog: "F38",
    expect: "installed-torch-pin-conflict",
    how: "venv over Debian + dist-infos of both triton 3.1.0 and pytorch-triton 3.2.0+git4b3bb1f8",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "two-tritons");
      writeDistInfo(site, "triton", "3.1.0");
      writeDistInfo(site, "pytorch-triton", "3.2.0+git4b3bb1f8");
      return { python };
    },
  },
  {
    id: "F08-torch-dist-info-twice",
    catalog: "F08",
    expect: "torch-installed-twice",
    how: "venv over Debian + a torch 2.5.1 dist-info in the venv (Debian's 1.13 in dist-packages)",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "torch-twice");
      writeDistInfo(site, "torch", "2.5.1");
      return { python };
    },
  },
  {
    id: "F08-other-torch-on-pythonpath",
    catalog: "F08",
    expect: "torch-installed-twice",
    how: "Debian's python with PYTHONPATH naming another environment's site-packages: torch (a link) with a 2.5.1 dist-info",
    build: (ctx) => {
      const dir = ctx.dir("other-site");
      symlinkSync("/usr/lib/python3/dist-packages/torch", join(dir, "torch"));
      writeDistInfo(dir, "torch", "2.5.1");
      return { python: DEBIAN_PYTHON, env: { PYTHONPATH: dir } };
    },
  },
  {
    id: "F08-user-site-leak",
    catalog: "F08",
    expect: "user-site-leak",
    how: "Debian's python with PYTHONUSERBASE whose user site holds a triton 3.1.0 dist-info",
    build: (ctx) => {
      const base = ctx.dir("userbase");
      writeDistInfo(join(base, "lib/python3.11/site-packages"), "triton", "3.1.0");
      return { python: DEBIAN_PYTHON, env: { PYTHONUSERBASE: base } };
    },
  },
];

const arch = [
  {
    id: "F15-torch-without-old-gpu",
    catalog: "F15",
    expect: "torch-arch-not-covered",
    accept: ["extension-arch-missing", "ptx-only-coverage"],
    how: "capture h100-healthy with its GPU renamed to a GTX 1080 (6.1): cu130 builds start at sm_75",
    capture: () => fromCapture("h100-healthy", (f) => renameGpus(f, GPUS.gtx1080)),
  },
  {
    id: "F17-extension-sm80-only",
    catalog: "F17",
    expect: "extension-arch-missing",
    how: "venv over Debian + xformers with a library nvcc built for sm_80 only; H100 host and torch",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "ext-sm80");
      pkg(site, "xformers");
      nvccLibrary(join(site, "xformers/_C_sm80.so"), ["arch=compute_80,code=sm_80"]);
      writeDistInfo(site, "xformers", "0.0.0+gpuprep.bench");
      return { python };
    },
    gpu: H100,
  },
  {
    id: "F87-extension-sm120a-on-gb10",
    catalog: "F87",
    expect: "extension-arch-missing",
    how: "venv over Debian + flash_attn with a library nvcc built for sm_120a only; GB10 (12.1) host",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "ext-sm120a");
      pkg(site, "flash_attn");
      nvccLibrary(join(site, "flash_attn/flash_attn_2_cuda.so"), ["arch=compute_120a,code=sm_120a"]);
      writeDistInfo(site, "flash-attn", "0.0.0+gpuprep.bench");
      return { python };
    },
    gpu: { ...H100, gpu: GPUS.gb10 },
  },
  {
    id: "F65-ptx-only-library",
    catalog: "F65",
    expect: "ptx-only-coverage",
    how: "venv over Debian + a package whose library nvcc built as compute_80 PTX only; H100 host",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "ext-ptx");
      pkg(site, "causal_conv1d");
      nvccLibrary(join(site, "causal_conv1d/causal_conv1d_cuda.so"), ["arch=compute_80,code=compute_80"]);
      writeDistInfo(site, "causal-conv1d", "0.0.0+gpuprep.bench");
      return { python };
    },
    gpu: H100,
  },
  {
    id: "F18-arch-list-excludes-h100",
    fastLocal: true,
    catalog: "F18",
    expect: "torch-cuda-arch-list-excludes-gpu",
    how: 'TORCH_CUDA_ARCH_LIST="7.0 8.0" set for real; H100 host and torch',
    build: debianWithEnv({ TORCH_CUDA_ARCH_LIST: "7.0 8.0" }),
    gpu: H100,
  },
  {
    id: "F19-arch-list-stops-at-9.0-on-rtx5090",
    fastLocal: true,
    catalog: "F19",
    expect: "torch-cuda-arch-list-excludes-gpu",
    how: 'TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 8.9 9.0" (seed 004) set for real; RTX 5090 host',
    build: debianWithEnv({ TORCH_CUDA_ARCH_LIST: "7.0 7.5 8.0 8.6 8.9 9.0" }),
    gpu: { ...H100, gpu: GPUS.rtx5090 },
  },
  {
    id: "F58-arch-list-invalid",
    fastLocal: true,
    catalog: "F58",
    expect: "torch-cuda-arch-list-invalid",
    how: 'TORCH_CUDA_ARCH_LIST="sm_90" (not torch\'s X.Y form) set for real; H100 host and torch',
    build: debianWithEnv({ TORCH_CUDA_ARCH_LIST: "sm_90" }),
    gpu: H100,
  },
];

const driver = [
  {
    id: "F23-driver-older-than-torch-cuda",
    catalog: "F23",
    expect: "torch-driver-too-old",
    how: "capture h100-healthy with the driver 535.104.05 (CUDA 12.2) for torch cu130",
    capture: () =>
      fromCapture("h100-healthy", (f) => {
        f.host.nvidia.driverVersion = "535.104.05";
        f.host.nvidia.cudaVersion = "12.2";
      }),
  },
  {
    id: "F26-driver-library-mismatch",
    catalog: "F26",
    expect: "nvidia-driver-unavailable",
    how: "capture h100-healthy with nvidia-smi failing: 'Failed to initialize NVML: Driver/library version mismatch'",
    capture: () =>
      fromCapture("h100-healthy", (f) => {
        Object.assign(f.host.nvidia, {
          status: "failed",
          error: "Failed to initialize NVML: Driver/library version mismatch",
          driverVersion: null,
          cudaVersion: null,
          gpus: [],
        });
      }),
  },
  {
    id: "F28-cuda-unknown-error",
    catalog: "F28",
    expect: "torch-cuda-unavailable",
    how: "capture h100-healthy with torch's live result: is_available() False, 'CUDA unknown error' (nvidia_uvm)",
    capture: () =>
      fromCapture("h100-healthy", (f) => {
        Object.assign(f.python.torchLive.result, {
          cudaAvailable: false,
          cudaInitError:
            "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
          deviceCount: 0,
          devices: [],
          kernel: { ran: false, ok: false, error: null },
        });
      }),
  },
  {
    id: "F29-mig-enabled",
    catalog: "F29",
    expect: "mig-enabled",
    how: "capture h100-healthy with the GPU's MIG mode Enabled",
    capture: () =>
      fromCapture("h100-healthy", (f) => {
        f.host.nvidia.gpus[0].migMode = "Enabled";
      }),
  },
  {
    id: "cuda-visible-devices-empty-on-h100",
    catalog: null,
    expect: "cuda-visible-devices-hides-gpus",
    how: 'capture h100-cuda-visible-devices-empty.json as captured (CUDA_VISIBLE_DEVICES="" on the H100)',
    capture: () => fromCapture("h100-cuda-visible-devices-empty"),
  },
];

/** A venv over Debian with a package whose compiled module needs libcudart.so.12 (not installed). */
function cudart12Package(ctx, name, files) {
  const { python, site } = venvOverDebian(ctx, name);
  files(site, cudart12Stub(ctx.dir(`${name}-link`)));
  return { python };
}

const extensions = [
  {
    id: "F30-extension-undefined-symbol",
    catalog: "F30",
    expect: "extension-import-failed",
    how: "venv over Debian + xformers whose _C (gcc) needs c10::cuda::SetDevice: undefined symbol",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "undefined-symbol");
      const dir = pkg(site, "xformers", "from . import _C  # noqa: F401\n");
      gccExtension(python, join(BUILDERS, "xformers-undefined-symbol/xformers/_C.c"), dir, "_C");
      writeDistInfo(site, "xformers", "0.0.0+gpuprep.bench");
      return { python };
    },
  },
  {
    id: "F35-extension-needs-cudart12",
    catalog: "F35",
    expect: "extension-import-failed",
    how: "venv over Debian + flash_attn whose module (gcc) links libcudart.so.12, absent here",
    build: (ctx) =>
      cudart12Package(ctx, "cudart12-module", (site, link) => {
        pkg(site, "flash_attn", "import flash_attn_2_cuda  # noqa: F401\n");
        gccExtension(DEBIAN_PYTHON, join(SOURCES, "needs_cudart12.c"), site, "flash_attn_2_cuda", [
          "-DMODULE_NAME=flash_attn_2_cuda",
          ...link,
        ]);
        writeDistInfo(site, "flash-attn", "0.0.0+gpuprep.bench");
      }),
  },
  {
    id: "F39-bitsandbytes-cuda-library",
    catalog: "F39",
    expect: "extension-import-failed",
    how: "venv over Debian + bitsandbytes loading (ctypes) a library that links libcudart.so.12, absent here",
    build: (ctx) =>
      cudart12Package(ctx, "bnb-library", (site, link) => {
        const dir = pkg(
          site,
          "bitsandbytes",
          "import ctypes, os\n" +
            "lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'libbitsandbytes_cuda124.so'))\n",
        );
        const out = join(dir, "libbitsandbytes_cuda124.so");
        ctx.sh("gcc", ["-shared", "-fPIC", "-o", out, join(SOURCES, "cuda_library.c"), ...link]);
        writeDistInfo(site, "bitsandbytes", "0.0.0+gpuprep.bench");
      }),
  },
  {
    id: "extension-segfault-on-import",
    catalog: null,
    expect: "extension-import-failed",
    how: "venv over Debian + flash_attn whose module init (gcc) dereferences NULL: SIGSEGV",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "segfault");
      pkg(site, "flash_attn", "import flash_attn_2_cuda  # noqa: F401\n");
      gccExtension(
        python,
        join(BUILDERS, "flash-attn-segfault/flash_attn_2_cuda.c"),
        site,
        "flash_attn_2_cuda",
      );
      writeDistInfo(site, "flash-attn", "0.0.0+gpuprep.bench");
      return { python };
    },
  },
  {
    id: "F33-torch-under-numpy2",
    catalog: "F33",
    expect: "numpy-abi-mismatch",
    accept: ["duplicate-distributions"],
    how: "venv over Debian's torch 1.13 (NumPy 1.x) with numpy 2.2.6 installed by pip in the venv",
    build: (ctx) => ({ python: ctx.shared.numpy2Venv().python }),
  },
  {
    id: "F33-numpy1-module-under-numpy2",
    catalog: "F33",
    expect: "numpy-abi-mismatch",
    accept: ["duplicate-distributions"],
    how: "the same venv, --import-check np1_module (gcc, NumPy 1.24 headers) on PYTHONPATH",
    build: (ctx) => {
      const { python } = ctx.shared.numpy2Venv();
      const dir = ctx.dir("np1-module");
      gccExtension(python, join(BUILDERS, "numpy1-module/np1_module.c"), dir, "np1_module", [
        `-I${NUMPY1_INCLUDE}`,
      ]);
      return { python, env: { PYTHONPATH: dir }, args: ["--import-check", "np1_module"] };
    },
  },
  {
    id: "F40-pyarrow-too-new-for-cudf",
    catalog: "F40",
    expect: "pyarrow-cudf-mismatch",
    how: "venv over Debian + cudf-cu12 24.12 importing pyarrow.lib.PyExtensionType, gone in pyarrow 21.0.0",
    build: (ctx) => {
      const { python, site } = venvOverDebian(ctx, "cudf-pyarrow");
      writeFiles(site, {
        "pyarrow/__init__.py": "__version__ = '21.0.0'\n",
        "pyarrow/lib.py": "# pyarrow 21 removed PyExtensionType\nclass ExtensionType:\n    pass\n",
        "cudf/__init__.py": "from pyarrow.lib import PyExtensionType  # noqa: F401\n",
      });
      writeDistInfo(site, "pyarrow", "21.0.0");
      writeDistInfo(site, "cudf-cu12", "24.12.0", { requires: ["pyarrow<19.0.0a0,>=14.0.0"] });
      return { python };
    },
  },
  {
    id: "F36-ld-library-path-cuda12",
    fastLocal: true,
    catalog: "F36",
    expect: "ld-library-path-foreign-cuda",
    how: "LD_LIBRARY_PATH=<dir>/cuda-12.4/lib64 set for real; H100 host and torch (CUDA 13.0)",
    build: (ctx) => {
      const dir = join(ctx.dir("cuda-12.4"), "cuda-12.4/lib64");
      mkdirSync(dir, { recursive: true });
      return { python: ctx.shared.debianVenv().python, env: { LD_LIBRARY_PATH: dir } };
    },
    gpu: H100,
  },
];

const envVars = [
  ["F46-cuda-launch-blocking", "F46", { CUDA_LAUNCH_BLOCKING: "1" }],
  ["F47-no-cuda-memory-caching", "F47", { PYTORCH_NO_CUDA_MEMORY_CACHING: "1" }],
  ["F48-module-loading-eager", "F48", { CUDA_MODULE_LOADING: "EAGER" }, "info"],
  ["F49-cuda-cache-disabled", "F49", { CUDA_CACHE_DISABLE: "1" }],
].map(([id, catalog, env, minSeverity]) => ({
  id,
  catalog,
  expect: "debug-env-left-on",
  minSeverity,
  how: `${Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")} set for real; H100 host and torch`,
  build: debianWithEnv(env),
  gpu: H100,
  fastLocal: true,
}));

const settings = [
  ...envVars,
  {
    id: "F50-alloc-conf-bogus",
    catalog: "F50",
    expect: "alloc-conf-invalid",
    how: "PYTORCH_CUDA_ALLOC_CONF=bogus set for real (checked for syntax; no GPU needed)",
    build: debianWithEnv({ PYTORCH_CUDA_ALLOC_CONF: "bogus" }),
  },
  {
    id: "F50-alloc-conf-typo-on-h100",
    catalog: "F50",
    expect: "alloc-conf-invalid",
    how: "capture h100-alloc-conf-invalid.json as captured (expandable_segment:True, torch's own error)",
    capture: () => fromCapture("h100-alloc-conf-invalid"),
  },
  {
    id: "F77-nccl-p2p-disabled",
    fastLocal: true,
    catalog: "F77",
    expect: "nccl-transport-disabled",
    how: "NCCL_P2P_DISABLE=1 set for real; the 2x H200 (NVLink) host and torch of h200x2-healthy",
    build: debianWithEnv({ NCCL_P2P_DISABLE: "1" }),
    gpu: H200X2,
  },
  {
    id: "F77-nccl-shm-disabled",
    fastLocal: true,
    catalog: "F77",
    expect: "nccl-transport-disabled",
    how: "NCCL_SHM_DISABLE=1 set for real; the 2x H200 host and torch",
    build: debianWithEnv({ NCCL_SHM_DISABLE: "1" }),
    gpu: H200X2,
  },
  {
    id: "F75-memlock-8mib",
    fastLocal: true,
    catalog: "F75",
    expect: "memlock-limited",
    how: "this VM's real ulimit -l (8 MiB) with h100-healthy's GPUs (host.nvidia only)",
    build: (ctx) => ({ python: ctx.shared.debianVenv().python }),
    gpu: { ...H100, keepUlimits: true },
  },
  {
    id: "F42-shm-64mib",
    catalog: "F42",
    expect: "shm-too-small",
    how: "capture h100-healthy with /dev/shm at Docker's default 64 MiB",
    capture: () =>
      fromCapture("h100-healthy", (f) => {
        f.host.shm = { sizeBytes: 64 * 1024 ** 2, freeBytes: 64 * 1024 ** 2 };
      }),
  },
];

const toolchain = [
  {
    id: "F45-triton-cache-unwritable",
    catalog: "F45",
    expect: "jit-cache-unwritable",
    how: "TRITON_CACHE_DIR=/etc/passwd/triton (under a file: no user can create it); H100 host and torch",
    build: debianWithEnv({ TRITON_CACHE_DIR: "/etc/passwd/triton" }),
    gpu: H100,
  },
  {
    id: "F69-inductor-cache-unwritable",
    catalog: "F69",
    expect: "jit-cache-unwritable",
    how: "TORCHINDUCTOR_CACHE_DIR=/proc/gpuprep-inductor (procfs: not creatable, even by root); H100 host",
    build: debianWithEnv({ TORCHINDUCTOR_CACHE_DIR: "/proc/gpuprep-inductor" }),
    gpu: H100,
  },
  {
    id: "F55-cuda-home-without-toolkit",
    catalog: "F55",
    expect: "cuda-toolkit-missing",
    how: "CUDA_HOME=/usr/local/cuda-12.8 (not installed), PATH without nvcc, project needing flash-attn (sdist); H100",
    build: (ctx) => ({
      python: ctx.shared.debianVenv().python,
      env: { CUDA_HOME: "/usr/local/cuda-12.8", PATH: "/usr/bin:/bin" },
      project: ctx.project("needs-flash-attn", {
        "requirements.txt": "flash-attn==2.8.3\n",
      }),
    }),
    gpu: H100,
  },
  {
    id: "F56-nvcc-13-torch-cu128",
    catalog: "F56",
    expect: "cuda-toolkit-torch-mismatch",
    how: "CUDA_HOME=/usr/local/cuda-13.0 (nvcc 13.0, real); H100 host, torch changed to 2.8.0+cu128 (no capture has one)",
    build: debianWithEnv({ CUDA_HOME: "/usr/local/cuda-13.0" }),
    gpu: { ...H100, torchCuda: { version: "2.8.0+cu128", cuda: "12.8" } },
  },
];

const other = [
  {
    id: "externally-managed-system-python",
    catalog: null,
    expect: "externally-managed-python",
    minSeverity: "info",
    how: "Debian's /usr/bin/python3 (PEP 668 EXTERNALLY-MANAGED): pip install refused",
    build: () => ({ python: DEBIAN_PYTHON }),
  },
];

export const CASES = [
  ...controls,
  ...install,
  ...arch,
  ...driver,
  ...extensions,
  ...settings,
  ...toolchain,
  ...other,
];

/** Environments several cases share, built once (cases that only differ by variables reuse them). */
export function sharedEnvironments(ctx) {
  const once = (fn) => {
    let value;
    return () => (value ??= fn());
  };
  return {
    debianVenv: once(() => makeVenv(ctx.dir("venv-over-debian"), { systemSite: true })),
    plainVenv: once(() => makeVenv(ctx.dir("venv-plain"))),
    numpy2Venv: once(() => {
      const venv = makeVenv(ctx.dir("venv-numpy2"), { systemSite: true });
      installWheels(venv.python, [NUMPY2_WHEEL]);
      return venv;
    }),
  };
}

export function writeProject(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}
