/**
 * Facts for a machine gpuprep is not on, named from the knowledge base (`doctor --target dgx-spark
 * --driver 580`): its GPU, CPU and driver, and no Python environment (nothing was gathered there),
 * so that the project's manifests can be judged for it before anything is installed (issue 22
 * item 9). Only rules about the project read such facts; doctor says so.
 */
import type { Facts, ProjectFacts } from "../facts/schema.js";
import { FactsSchema } from "../facts/schema.js";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION } from "../facts/schema-id.js";
import { makeEnvelope } from "../json-envelope.js";

export interface NamedMachine {
  /** How the user named it ("--target dgx-spark"). */
  origin: string;
  gpuName: string;
  computeCapability: string;
  cpuArch: string;
  /** null: not known (no --driver, none shipped); the project rules then judge without it. */
  driverVersion: string | null;
  /** The Python the project would run on, where one is known ("3.12"); null otherwise. */
  python: string | null;
}

/** A ulimit nobody read: soft and hard not known. */
const NO_LIMIT_KNOWN = { soft: null, hard: null };

const NOT_GATHERED = "not gathered: the machine is named from the knowledge base";

/** The named machine's one GPU: its name and capability, nothing nvidia-smi would add. */
function namedGpu(machine: NamedMachine) {
  return {
    index: 0,
    name: machine.gpuName,
    uuid: null,
    computeCapability: machine.computeCapability,
    memoryTotalMiB: null,
    migMode: null,
    persistenceMode: null,
    pciBusId: null,
    pcieLinkGenMax: null,
    pcieLinkWidthMax: null,
    pcieLinkGenCurrent: null,
    pcieLinkWidthCurrent: null,
  };
}

/** A Linux host with the named CPU, driver and GPU; nothing else known. */
function namedHost(machine: NamedMachine) {
  return {
    os: { system: "Linux", release: "", distroId: null, distroVersion: null, prettyName: null },
    cpuArch: machine.cpuArch,
    cpuCount: null,
    memTotalBytes: null,
    nvidia: {
      status: "ok",
      error: null,
      driverVersion: machine.driverVersion,
      cudaVersion: null,
      gpus: [namedGpu(machine)],
      kernelModule: null,
    },
    container: { inContainer: false, runtime: null, markers: [] },
    shm: { sizeBytes: null, freeBytes: null },
    ulimits: { memlock: NO_LIMIT_KNOWN, stack: NO_LIMIT_KNOWN, nofile: NO_LIMIT_KNOWN },
  };
}

/** No Python environment: nothing was gathered there, only the Python version where one is known. */
function noPythonEnvironment(machine: NamedMachine) {
  return {
    interpreter: {
      executable: "(none)",
      // The Python the project would run on, where known; "" where not (no interpreter there).
      version: machine.python ?? "",
      implementation: "",
      prefix: "(none)",
      basePrefix: "(none)",
      kind: "other",
      sysPath: [],
      userSite: null,
      userSiteEnabled: false,
      externallyManaged: false,
    },
    distributions: [],
    duplicates: [],
    torch: null,
    numpy: null,
    torchLive: {
      status: "skipped",
      durationMs: 0,
      exitCode: null,
      signal: null,
      error: NOT_GATHERED,
      stderrTail: null,
      result: null,
    },
    extensions: [],
    env: {},
    constraintFiles: [],
    probe: { version: 1, mode: "fast", durationMs: 0 },
  };
}

export function factsForNamedMachine(machine: NamedMachine, project: ProjectFacts | null): Facts {
  return FactsSchema.parse({
    ...makeEnvelope(FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, null),
    capturedAt: new Date().toISOString(),
    target: { kind: "local", ref: machine.origin, python: "(none)" },
    host: namedHost(machine),
    python: noPythonEnvironment(machine),
    project,
    binaries: { scanned: false, reason: NOT_GATHERED, durationMs: 0, files: [], filesExamined: 0 },
  });
}
