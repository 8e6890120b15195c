/**
 * Facts: one typed, versioned, serialisable snapshot of a machine + Python environment + project.
 * Everything after `gather` is a pure function of Facts and the knowledge base, so a snapshot
 * saved anywhere (`--save`) can be diagnosed anywhere (`--from`). The zod schema is the single
 * source of truth: the TS types are inferred from it and `--from` files are checked against it.
 */
import { z } from "zod";
import { envelopeShape } from "../json-envelope-schema.js";

import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION } from "./schema-id.js";

export { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION };

const nullableString = z.string().nullable();
const nullableNumber = z.number().nullable();

/** For z.preprocess: an object's `from` key read as `to` (a field renamed since older snapshots). */
function renamedKey(from: string, to: string) {
  return (value: unknown): unknown => {
    if (typeof value !== "object" || value === null || !(from in value) || to in value) return value;
    const { [from]: moved, ...rest } = value as Record<string, unknown>;
    return { ...rest, [to]: moved };
  };
}
/** A resource limit as `ulimit` reports it: bytes, or "unlimited"; null when unreadable. */
const limitValue = z.union([z.number(), z.literal("unlimited")]).nullable();

export const GpuSchema = z.object({
  index: z.number(),
  name: z.string(),
  uuid: nullableString,
  /** "9.0", as nvidia-smi's compute_cap; null on drivers too old to report it. */
  computeCapability: nullableString,
  memoryTotalMiB: nullableNumber,
  /** "Enabled" / "Disabled"; null where MIG is not supported ("[N/A]"). */
  migMode: nullableString,
  persistenceMode: nullableString,
  pciBusId: nullableString,
  pcieLinkGenMax: nullableNumber,
  pcieLinkWidthMax: nullableNumber,
  pcieLinkGenCurrent: nullableNumber,
  pcieLinkWidthCurrent: nullableNumber,
});

export const NvidiaDriverSchema = z.object({
  /** ok: nvidia-smi answered; not-found: no nvidia-smi on PATH; failed: it ran and failed (no driver loaded, etc.). */
  status: z.enum(["ok", "not-found", "failed"]),
  error: nullableString,
  driverVersion: nullableString,
  /** The highest CUDA version this driver supports, from nvidia-smi's header ("CUDA Version: 13.0"). */
  cudaVersion: nullableString,
  gpus: z.array(GpuSchema),
  /** /proc/driver/nvidia/version first line, when readable (present even when nvidia-smi is missing). */
  kernelModule: nullableString,
});

/** ECC error counts of one section (volatile: since the last driver load / reset; aggregate: the GPU's life), SRAM and DRAM summed. */
const EccCountsSchema = z.object({ correctable: nullableNumber, uncorrectable: nullableNumber });

/** One GPU's passive health counters, from `nvidia-smi -q -x` (and `nvidia-smi nvlink -e`). */
export const GpuHealthEntrySchema = z.object({
  pciBusId: nullableString,
  uuid: nullableString,
  /** "Enabled" / "Disabled"; null where ECC is not supported. */
  eccMode: nullableString,
  eccVolatile: EccCountsSchema,
  eccAggregate: EccCountsSchema,
  /** Dynamic page retirement (pre-Ampere and some Hopper parts); null counts: not supported. */
  retiredPages: z.object({
    singleBit: nullableNumber,
    doubleBit: nullableNumber,
    pending: z.boolean().nullable(),
  }),
  /** Row remapping (Ampere and newer); null where the GPU has none. */
  remappedRows: z
    .object({
      correctable: nullableNumber,
      uncorrectable: nullableNumber,
      pending: z.boolean().nullable(),
      failure: z.boolean().nullable(),
    })
    .nullable(),
  /** Active clock event (throttle) reasons, as nvidia-smi names them: gpu_idle, sw_power_cap, hw_slowdown, ... */
  clockEventReasons: z.array(z.string()),
  /** NVSwitch systems: the GPU's fabric registration (state Completed, status Success when healthy); null: not applicable. */
  fabric: z.object({ state: nullableString, status: nullableString }),
  /** NVLink error counters summed over the GPU's links, by nvidia-smi's names ("Replay Errors"); null: no NVLink reported. */
  nvlinkErrors: z.record(z.string(), z.number()).nullable(),
});

/**
 * Passive GPU health (probe --gpu-health, which fleet passes): read-only counters the driver keeps,
 * Xid events in the kernel log, DCGM's health verdict where DCGM is installed. Absent when not asked.
 */
export const GpuHealthSchema = z.object({
  /** ok: nvidia-smi -q -x was read; failed: it was not (error says why). */
  status: z.enum(["ok", "failed"]),
  error: nullableString,
  gpus: z.array(GpuHealthEntrySchema),
  /** Xid events in the kernel log since boot (as far back as the ring buffer reaches), per GPU and code. */
  xids: z.object({
    status: z.enum(["ok", "unreadable"]),
    error: nullableString,
    events: z.array(z.object({ pci: z.string(), code: z.number(), count: z.number(), last: z.string() })),
  }),
  /** `dcgmi health -c -j` where DCGM is installed: its overall verdict (Healthy, Warning, Failure). */
  dcgm: z.object({
    status: z.enum(["not-installed", "ok", "failed"]),
    overall: nullableString,
    exitCode: nullableNumber,
    output: nullableString,
  }),
});

export const HostSchema = z.object({
  os: z.object({
    system: z.string(),
    release: z.string(),
    distroId: nullableString,
    distroVersion: nullableString,
    prettyName: nullableString,
    /** platform.libc_ver()'s glibc version ("2.36"); null on musl; absent in snapshots made before gpuprep recorded it. */
    glibc: nullableString.optional(),
  }),
  /** socket.gethostname(); absent in snapshots made before gpuprep recorded it. */
  hostname: nullableString.optional(),
  /** platform.machine(): x86_64, aarch64, ... */
  cpuArch: z.string(),
  cpuCount: nullableNumber,
  memTotalBytes: nullableNumber,
  /** /proc/meminfo MemAvailable; absent in snapshots made before gpuprep recorded it. */
  memAvailableBytes: nullableNumber.optional(),
  nvidia: NvidiaDriverSchema,
  /** Passive GPU health; only when the probe was asked for it (fleet). */
  gpuHealth: GpuHealthSchema.optional(),
  container: z.object({
    inContainer: z.boolean(),
    /** docker, podman, kubernetes, ... when a marker tells. */
    runtime: nullableString,
    markers: z.array(z.string()),
  }),
  shm: z.object({ sizeBytes: nullableNumber, freeBytes: nullableNumber }),
  ulimits: z.object({
    memlock: z.object({ soft: limitValue, hard: limitValue }),
    stack: z.object({ soft: limitValue, hard: limitValue }),
    nofile: z.object({ soft: limitValue, hard: limitValue }),
  }),
});

export const InterpreterSchema = z.object({
  executable: z.string(),
  version: z.string(),
  implementation: z.string(),
  prefix: z.string(),
  basePrefix: z.string(),
  /** venv (python -m venv / virtualenv), uv (a venv made by uv), conda, system, other. */
  kind: z.enum(["venv", "uv", "conda", "system", "other"]),
  sysPath: z.array(z.string()),
  userSite: nullableString,
  userSiteEnabled: z.boolean(),
  /** PEP 668 EXTERNALLY-MANAGED marker present for this interpreter. */
  externallyManaged: z.boolean(),
});

/** A Requires-Dist line of an installed distribution that names torch, triton or pytorch-triton. */
export const DistRequirementSchema = z.object({
  /** torch, triton, pytorch-triton (PEP 503). */
  normalizedName: z.string(),
  /** PEP 440 specifier without spaces: "==2.4.0", ">=1.13". */
  specifier: z.string(),
  /** The environment marker after ";" ("extra == 'dev'", "platform_system == 'Linux'"), or null. */
  marker: nullableString,
  raw: z.string(),
});

export const DistributionSchema = z.object({
  name: z.string(),
  /** PEP 503 normalised name: lower case, runs of -_. collapsed to -. */
  normalizedName: z.string(),
  version: z.string(),
  /** The sys.path entry the .dist-info / .egg-info lives in. */
  location: z.string(),
  installer: nullableString,
  /** Index of `location` in sys.path: lower wins at import time. */
  pathIndex: z.number(),
  /** Its Requires-Dist lines on torch / triton / pytorch-triton; absent when none (or in older snapshots). */
  requires: z.array(DistRequirementSchema).optional(),
});

export const DuplicateSchema = z.object({
  normalizedName: z.string(),
  entries: z.array(z.object({ version: z.string(), location: z.string(), pathIndex: z.number() })),
});

export const ChildRunSchema = z.object({
  /** ok: exited 0 with a result; error: Python raised; crash: killed by a signal; timeout: killed at the limit. */
  status: z.enum(["ok", "error", "crash", "timeout", "skipped"]),
  durationMs: z.number(),
  exitCode: nullableNumber,
  signal: nullableString,
  error: nullableString,
  stderrTail: nullableString,
  /**
   * The child exited but left processes behind (still in its process group, or holding its
   * output pipes): an import that starts a daemon. The probe killed them. Absent in older snapshots.
   */
  leftProcesses: z.boolean().optional(),
});

export const TorchLiveResultSchema = z.object({
  version: z.string(),
  file: z.string(),
  cudaBuilt: nullableString,
  cudaAvailable: z.boolean(),
  cudaInitError: nullableString,
  deviceCount: z.number(),
  devices: z.array(
    z.object({
      index: z.number(),
      name: z.string(),
      capability: z.tuple([z.number(), z.number()]),
      totalMemoryBytes: z.number(),
      multiProcessorCount: nullableNumber,
      /** Absent in older snapshots. */
      l2CacheBytes: nullableNumber.optional(),
    }),
  ),
  /** torch.cuda.get_arch_list(), or the build's arch flags it reads when CUDA is unavailable. */
  archList: z.array(z.string()),
  cudnnVersion: nullableNumber,
  ncclVersion: nullableString,
  /**
   * The SDPA backend switches, named as torch.nn.attention.SDPBackend and validate name them.
   * Snapshots before the shared torch_env.py said `memEfficient` for `efficient`: read as such.
   */
  sdpa: z.preprocess(
    renamedKey("memEfficient", "efficient"),
    z.object({
      flash: z.boolean().nullable(),
      efficient: z.boolean().nullable(),
      math: z.boolean().nullable(),
      cudnn: z.boolean().nullable(),
    }),
  ),
  /** How this torch selects SDPA backends: "nn.attention", "backends.cuda.sdp_kernel" or "none"; absent in older snapshots. */
  sdpaApi: z.string().optional(),
  tf32: z.object({ matmul: z.boolean().nullable(), cudnn: z.boolean().nullable() }),
  float32MatmulPrecision: nullableString,
  /**
   * An elementwise kernel and a 512x512 matmul launched on device 0 and checked against the CPU
   * (relError: the matmul's, absent in older snapshots, whose check was one elementwise kernel).
   */
  kernel: z.object({
    ran: z.boolean(),
    ok: z.boolean(),
    relError: nullableNumber.optional(),
    error: nullableString,
  }),
  numpy: z.object({ version: nullableString, roundTrip: z.boolean().nullable(), error: nullableString }),
  /** Seconds `import torch` took; absent in older snapshots. */
  importSeconds: z.number().optional(),
  /** Warnings torch printed on import or CUDA init (e.g. "sm_120 is not compatible ..."). */
  warnings: z.array(z.string()),
});

export const ExtensionImportSchema = ChildRunSchema.extend({
  module: z.string(),
  distribution: nullableString,
  version: nullableString,
});

export const ConstraintFileSchema = z.object({
  path: z.string(),
  /** Why we read it: PIP_CONSTRAINT, pip.conf, or a known NGC location. */
  origin: z.string(),
  pins: z.array(
    z.object({ name: z.string(), normalizedName: z.string(), spec: z.string(), raw: z.string() }),
  ),
});

/**
 * The CUDA toolkit a source build would use, found as torch.utils.cpp_extension._find_cuda_home()
 * finds it: CUDA_HOME, CUDA_PATH, the nvcc on PATH, /usr/local/cuda.
 */
export const ToolkitSchema = z.object({
  /** null: no toolkit found (torch's CUDA_HOME would be None). */
  home: nullableString,
  source: z.enum(["CUDA_HOME", "CUDA_PATH", "nvcc-on-path", "default"]).nullable(),
  /** <home>/bin/nvcc, the compiler cpp_extension runs; null when it is not there. */
  nvcc: nullableString,
  /** "13.0" from `nvcc --version`'s "release X.Y". */
  release: nullableString,
  error: nullableString,
});

/**
 * One ptxas that Triton runs or could run (src/probe/probe.py start_jit_toolchain): a binary
 * bundled in the triton wheel, one a TRITON_*_PATH variable names, or the toolkit's; each asked
 * `--version` and `--help` (whose --gpu-name list says which targets it assembles).
 */
export const PtxasToolSchema = z.object({
  /** The tool Triton knows it as: ptxas (every target, or below sm_100), ptxas-blackwell (>= sm_100), ptxas-thor (sm_110). */
  name: z.string(),
  role: z.enum(["bundled", "env", "toolkit"]),
  /** For role env: TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH, TRITON_PTXAS_THOR_PATH. */
  variable: nullableString,
  path: z.string(),
  exists: z.boolean(),
  /** "12.8" from --version's "release X.Y"; null when it did not run. */
  version: nullableString,
  /** The sm_ values --help lists for --gpu-name (sm_90a, sm_121a ...); null when not listed. */
  gpuNames: z.array(z.string()).nullable(),
  error: nullableString,
});

/** What JIT compilation on the GPU runs: Triton's ptxas binaries and NVRTC's architectures. */
export const JitToolchainSchema = z.object({
  /** null: no triton package on the interpreter's path. */
  triton: z
    .object({
      location: z.string(),
      version: nullableString,
      /** Its compiler.py picks ptxas-blackwell for arch >= 100 (triton >= 3.6). */
      blackwellPtxas: z.boolean(),
      /** Its compiler.py picks ptxas-thor for arch 110. */
      thorPtxas: z.boolean(),
    })
    .nullable(),
  ptxas: z.array(PtxasToolSchema),
  /** libnvrtc.so files (nvidia-* wheels first, then the toolkit's) and nvrtcGetSupportedArchs. */
  nvrtc: z.array(
    z.object({
      path: z.string(),
      version: nullableString,
      archs: z.array(z.string()).nullable(),
      error: nullableString,
    }),
  ),
});

/** A compile / JIT cache directory (Triton, Inductor, the CUDA JIT cache) and whether this process can write it. */
export const CacheDirSchema = z.object({
  name: z.enum(["triton", "inductor", "cuda-jit"]),
  /** The variable that moves it: TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH. */
  variable: z.string(),
  /** The path came from that variable (else from the tool's default). */
  fromVariable: z.boolean(),
  /** null when the default cannot be worked out (error says why). */
  path: nullableString,
  /** The directory itself exists. */
  exists: z.boolean(),
  /** What was checked: the directory, or the nearest existing path above it (where it would be created). */
  checked: nullableString,
  /** os.access(W_OK|X_OK) on `checked`; false when `checked` is not a directory; null when unknown. */
  writable: z.boolean().nullable(),
  error: nullableString,
});

export const PythonSchema = z.object({
  interpreter: InterpreterSchema,
  distributions: z.array(DistributionSchema),
  duplicates: z.array(DuplicateSchema),
  /** torch read from its files, without importing it. */
  torch: z
    .object({
      version: z.string(),
      cudaVersion: nullableString,
      gitVersion: nullableString,
      location: z.string(),
      /** CUDA libraries shipped inside torch/lib (libtorch_cuda.so, ...). */
      cudaLibraries: z.array(z.string()),
    })
    .nullable(),
  numpy: z.object({ version: z.string(), location: z.string() }).nullable(),
  torchLive: ChildRunSchema.extend({ result: TorchLiveResultSchema.nullable() }),
  extensions: z.array(ExtensionImportSchema),
  /** Relevant environment variables as the target interpreter sees them. */
  env: z.record(z.string(), z.string()),
  constraintFiles: z.array(ConstraintFileSchema),
  /** Absent in snapshots made before gpuprep recorded it. */
  toolkit: ToolkitSchema.optional(),
  /** The process UID (root writes anywhere but read-only mounts) and the JIT cache directories; absent in older snapshots. */
  cacheDirs: z.object({ uid: nullableNumber, entries: z.array(CacheDirSchema) }).optional(),
  /** Triton's ptxas and NVRTC (issue 25 item 4); absent in snapshots made before gpuprep recorded them. */
  jitToolchain: JitToolchainSchema.optional(),
  probe: z.object({ version: z.number(), mode: z.enum(["full", "fast"]), durationMs: z.number() }),
});

export const RequirementSchema = z.object({
  name: z.string(),
  normalizedName: z.string(),
  /** PEP 440 specifier as written ("==2.5.1", ">=2.3,<3"); "" when unpinned. */
  specifier: z.string(),
  extras: z.array(z.string()),
  marker: nullableString,
  url: nullableString,
  raw: z.string(),
  /** "pyproject.toml:project.dependencies", "requirements.txt:12", ... */
  origin: z.string(),
});

/** One conda package a pixi.toml or environment.yml asks for (a conda MatchSpec, split up). */
export const CondaDependencySchema = z.object({
  /** Package name as written: pytorch, pytorch-gpu, cuda-version, python ... */
  name: z.string(),
  /** The channel forced for it (`conda-forge::pytorch`, pixi `{ channel = "pytorch" }`); null: the channel order decides. */
  channel: nullableString,
  /** Conda version spec ("==2.5.1", "2.5.*", ">=2.4,<3"); "" when unpinned. */
  version: z.string(),
  /** Build-string glob ("cuda126*", "*cuda*"); null when not given. */
  build: nullableString,
  raw: z.string(),
  /** "pixi.toml:14", "environment.yml:9" */
  origin: z.string(),
  /** pixi feature ("default" for the top-level tables); null in environment.yml. */
  feature: nullableString,
  /** pixi [target.<platform>] it is limited to; null: every platform. */
  platform: nullableString,
});

/** A PyPI requirement of a pixi.toml ([pypi-dependencies]) or an environment.yml (its pip: list). */
export const CondaPypiDependencySchema = RequirementSchema.extend({
  /** pixi's per-package `index = "https://..."`; null when the manifest's indexes apply. */
  index: nullableString,
  feature: nullableString,
  platform: nullableString,
});

/** A pixi workspace (pixi.toml, or [tool.pixi] in pyproject.toml) or a conda environment.yml. */
export const CondaManifestSchema = z.object({
  kind: z.enum(["pixi", "conda-environment"]),
  path: z.string(),
  name: nullableString,
  /** In priority order, as names where the URL names one ("https://prefix.dev/conda-forge" -> "conda-forge"). */
  channels: z.array(z.string()),
  /** pixi platforms (linux-64, linux-aarch64 ...); [] for environment.yml (it solves for the machine it runs on). */
  platforms: z.array(z.string()),
  /** pixi [system-requirements] cuda per feature ("default", "gpu" ...): the `__cuda` the solve assumes. */
  systemCuda: z.record(z.string(), z.string()),
  /** pixi [environments]: environment -> its features (the default feature is implied). */
  environments: z.record(z.string(), z.array(z.string())),
  dependencies: z.array(CondaDependencySchema),
  pypiDependencies: z.array(CondaPypiDependencySchema),
  /** pixi [pypi-options] index-url / an environment.yml pip `--index-url` line. */
  pypiIndexUrl: nullableString,
  pypiExtraIndexUrls: z.array(z.string()),
  /** Lines of keys a fix names: "channels", "system-requirements.cuda", "platforms". */
  lines: z.record(z.string(), z.number()),
});

export const ProjectSchema = z.object({
  dir: z.string(),
  pyproject: z
    .object({
      path: z.string(),
      name: nullableString,
      requiresPython: nullableString,
      dependencies: z.array(RequirementSchema),
      optionalDependencies: z.record(z.string(), z.array(RequirementSchema)),
      dependencyGroups: z.record(z.string(), z.array(RequirementSchema)),
      uv: z.object({
        /** [tool.uv.sources]: package -> source table(s), kept as written. */
        sources: z.record(z.string(), z.unknown()),
        indexes: z.array(z.object({ name: nullableString, url: z.string(), explicit: z.boolean() })),
        constraintDependencies: z.array(RequirementSchema),
        overrideDependencies: z.array(RequirementSchema),
      }),
      /** Line of each key and array item ("tool.uv.sources.torch", "project.dependencies[]=torch==2.5.1"); absent in older snapshots. */
      lines: z.record(z.string(), z.number()).optional(),
    })
    .nullable(),
  requirementsFiles: z.array(
    z.object({
      path: z.string(),
      requirements: z.array(RequirementSchema),
      indexUrls: z.array(z.string()),
      extraIndexUrls: z.array(z.string()),
      constraintFiles: z.array(z.string()),
    }),
  ),
  uvLock: z
    .object({
      path: z.string(),
      packages: z.array(z.object({ name: z.string(), version: nullableString, source: nullableString })),
    })
    .nullable(),
  /** pixi and conda manifests; absent in snapshots taken before gpuprep read them. */
  condaManifests: z.array(CondaManifestSchema).optional(),
});

export const BinaryCoverageSchema = z.object({
  path: z.string(),
  /** The installed distribution that owns the file, when known. */
  distribution: nullableString,
  sizeBytes: z.number(),
  /** Distinct SASS targets: sm_90, sm_90a, sm_100f ... */
  sass: z.array(z.string()),
  /** Distinct PTX targets: compute_90, compute_120a ... */
  ptx: z.array(z.string()),
  entryCount: z.number(),
  error: nullableString,
});

export const BinariesSchema = z.object({
  scanned: z.boolean(),
  /** Why not scanned (--fast, remote transport) or null. */
  reason: nullableString,
  durationMs: z.number(),
  /** Only files that hold CUDA code (or failed to read); plain host libraries are left out. */
  files: z.array(BinaryCoverageSchema),
  filesExamined: z.number(),
});

/** One shared library of a locked wheel that holds CUDA code (or could not be read): its targets. */
export const LockedLibrarySchema = z.object({
  /** The member's path inside the wheel ("flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"). */
  member: z.string(),
  sass: z.array(z.string()),
  ptx: z.array(z.string()),
  error: nullableString,
});

/** One package of a lock: the wheel an installer would take for this machine, and what it holds. */
export const LockedPackageScanSchema = z.object({
  name: z.string(),
  version: nullableString,
  /** The wheel's file name; null when no wheel was chosen (pure Python, a marker, none locked). */
  wheel: nullableString,
  /** Its URL or path, as the lock names it. */
  location: nullableString,
  /**
   * scanned: its libraries were read; skipped: nothing to read (reason says why); unreachable: the
   * server did not answer or refused; failed: it answered, but the wheel could not be read or its
   * hash is not the lock's.
   */
  status: z.enum(["scanned", "skipped", "unreachable", "failed"]),
  reason: nullableString,
  sizeBytes: nullableNumber,
  /** Body bytes fetched over the network for this wheel (0 from disk). */
  bytesFetched: z.number().int(),
  transfer: z.enum(["file", "ranges", "stream"]).nullable(),
  /** Only the libraries with CUDA code, or that could not be read. */
  libraries: z.array(LockedLibrarySchema),
});

/**
 * The wheels the project's locks pin, read before they are installed (doctor --fetch; without it
 * only wheels already on disk). Absent when nothing was scanned, and in older snapshots.
 */
export const LockScanSchema = z.object({
  /** Whether downloading was allowed (--fetch). */
  fetch: z.boolean(),
  /** The platform the wheels were chosen for: this machine's CPU, Python and glibc. */
  platform: z.object({
    arch: z.string(),
    python: z.string(),
    glibc: z.string(),
    /** The snapshot did not record glibc, so manylinux tags were judged against this assumed version. */
    glibcAssumed: z.boolean(),
  }),
  durationMs: z.number().int(),
  locks: z.array(
    z.object({
      path: z.string(),
      kind: z.enum(["uv.lock", "pylock.toml", "requirements"]),
      /** The file could not be read as a lock; its packages are then empty. */
      error: nullableString,
      bytesFetched: z.number().int(),
      packages: z.array(LockedPackageScanSchema),
    }),
  ),
});

export const FactsSchema = z.object({
  // The shared envelope (schema, schemaVersion, tool, kbOverlay when one was used).
  ...envelopeShape(FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION),
  capturedAt: z.string(),
  target: z.object({
    /** slurm / kube: one node of a `gpuprep fleet` run (ref is the node's name). */
    kind: z.enum(["local", "container", "image", "ssh", "slurm", "kube"]),
    /** Container name, image ref, ssh host or fleet node; null for local. */
    ref: nullableString,
    python: z.string(),
  }),
  host: HostSchema,
  python: PythonSchema,
  project: ProjectSchema.nullable(),
  binaries: BinariesSchema,
  /** Issue 25 item 2: the project's locked wheels, scanned for this machine. */
  lockScan: LockScanSchema.optional(),
});

export type Facts = z.infer<typeof FactsSchema>;
export type HostFacts = z.infer<typeof HostSchema>;
export type GpuFacts = z.infer<typeof GpuSchema>;
export type PythonFacts = z.infer<typeof PythonSchema>;
export type TorchLiveResult = z.infer<typeof TorchLiveResultSchema>;
export type ExtensionImport = z.infer<typeof ExtensionImportSchema>;
export type Distribution = z.infer<typeof DistributionSchema>;
export type DistRequirement = z.infer<typeof DistRequirementSchema>;
export type ToolkitFacts = z.infer<typeof ToolkitSchema>;
export type JitToolchainFacts = z.infer<typeof JitToolchainSchema>;
export type PtxasToolFacts = z.infer<typeof PtxasToolSchema>;
export type CacheDir = z.infer<typeof CacheDirSchema>;
export type Requirement = z.infer<typeof RequirementSchema>;
export type ProjectFacts = z.infer<typeof ProjectSchema>;
export type CondaManifest = z.infer<typeof CondaManifestSchema>;
export type CondaDependency = z.infer<typeof CondaDependencySchema>;
export type CondaPypiDependency = z.infer<typeof CondaPypiDependencySchema>;
export type BinaryCoverage = z.infer<typeof BinaryCoverageSchema>;
export type BinariesFacts = z.infer<typeof BinariesSchema>;
export type LockScanFacts = z.infer<typeof LockScanSchema>;
export type LockedPackageScan = z.infer<typeof LockedPackageScanSchema>;
/** What probe.py prints: everything in Facts that comes from inside the target. */
export const ProbeOutputSchema = z.object({ host: HostSchema, python: PythonSchema });
export type ProbeOutput = z.infer<typeof ProbeOutputSchema>;
