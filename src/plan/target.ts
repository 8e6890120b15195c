/** The TargetMachine of a plan: from gathered Facts, or from a GPU name / profile plus flags. */
import type { Facts } from "../facts/schema.js";
import type { CpuArch, KnowledgeBase } from "../kb/index.js";
import { UserError } from "../errors.js";
import { quotedForMessage, singleLine } from "../util/single-line.js";
import { printablePrefix } from "../util/safe-read.js";
import type { SystemRow } from "../kb/types.js";
import { smiCapability, torchCapability } from "../facts/capability.js";
import { smiDriver } from "../facts/driver.js";
import { rowDriver } from "../kb/driver.js";
import { formatDriverVersion, parseDriverVersion, type DriverVersion } from "../vocabulary/driver-version.js";
import type { ComputeCapability } from "../vocabulary/compute-capability.js";
import type { Decision, TargetMachine } from "./types.js";

export interface NamedTarget {
  /** A profile or GPU name as the user typed it: "dgx-spark", "rtx-5070-ti", "NVIDIA H100 80GB HBM3". */
  gpu: string;
  driver: string | null;
  cpuArch: string | null;
  /** How the user named it, for messages ("--target dgx-spark"). */
  flag: string;
}

export function parseCpuArch(text: string, flag = "--arch"): CpuArch {
  const value = text.toLowerCase();
  if (value === "x86_64" || value === "amd64") return "x86_64";
  if (value === "aarch64" || value === "arm64" || value === "sbsa") return "aarch64";
  throw new UserError(
    `${flag} "${printablePrefix(text, 40)}" is not a CPU architecture gpuprep plans for`,
    "use x86_64 or aarch64",
  );
}

/** The --driver flag (or setting): the edge where the user's driver becomes a DriverVersion. */
export function checkDriverVersion(text: string): DriverVersion {
  // A Linux driver's branch has three digits, and the flag takes it as typed: no blanks around it.
  const driver = /^\d{3}(\.\d+){0,2}$/.test(text) ? parseDriverVersion(text) : null;
  if (!driver)
    throw new UserError(
      `--driver "${text}" is not a Linux driver version`,
      "give it as nvidia-smi prints it (580.95.05) or a branch (580)",
    );
  return driver;
}

/**
 * A GPU by name. Integrated systems (DGX Spark, GH200, Jetson) fix the CPU architecture; for
 * discrete GPUs it is x86_64 unless --arch says otherwise.
 */
export function targetFromName(kb: KnowledgeBase, named: NamedTarget): TargetMachine {
  const resolution = kb.resolveGpu(named.gpu);
  const row = resolution.match;
  if (!row) {
    const close = resolution.candidates.map((r) => r.name);
    throw new UserError(
      `${named.flag} "${named.gpu}" is not a GPU gpuprep knows`,
      close.length > 0
        ? `closest: ${close.join(", ")} (see \`gpuprep kb gpu NAME\`)`
        : "use a name as nvidia-smi prints it, a profile such as dgx-spark or rtx-5090, or a compute capability with --gpu",
    );
  }
  const requestedArch = named.cpuArch ? parseCpuArch(named.cpuArch) : null;
  if (requestedArch && row.hostCpuArch && requestedArch !== row.hostCpuArch) {
    throw new UserError(
      `${row.name} is an integrated system with an ${row.hostCpuArch} CPU, not ${requestedArch}`,
      "drop --arch, or name another GPU",
    );
  }
  const given = named.driver ? checkDriverVersion(named.driver) : null;
  const system = given === null ? kb.system(named.gpu) : null;
  const shipped = system && system.gpu === row.name ? system : null;
  return {
    origin: `${named.flag} ${named.gpu}`,
    gpuName: row.name,
    computeCapability: row.computeCapability,
    capability: kb.capabilityOf(row),
    cpuArch: requestedArch ?? row.hostCpuArch ?? "x86_64",
    ...targetDriver(given, shipped),
    unifiedMemory: row.unifiedMemory,
    python: null,
    gpuPresent: true,
    ...(shipped ? { driverSource: shippedDriverDecision(shipped) } : {}),
  };
}

/** The driver to plan for, as text and value: the one given, else the one the named system ships. */
function targetDriver(
  given: DriverVersion | null,
  shipped: SystemRow | null,
): Pick<TargetMachine, "driverVersion" | "driver"> {
  const driver = given ?? (shipped?.driver ? rowDriver(shipped.driver) : null);
  return { driverVersion: driver ? formatDriverVersion(driver) : null, driver };
}

/** A named system without --driver: plan for the driver it ships, or say that it is not sourced. */
function shippedDriverDecision(system: SystemRow): Decision {
  const sources = system.sources.map((s) => s.url);
  const cuda = system.cuda ? `, CUDA ${system.cuda}` : "";
  if (system.driver)
    return {
      topic: "system",
      choice: `${system.name} (${system.software}) with driver ${system.driver}${cuda}`,
      reason: `no --driver given: the plan is for the driver ${system.name} ships (knowledge base); pass --driver if yours is another (nvidia-smi shows it)`,
      sources,
    };
  return {
    topic: "system",
    choice: `${system.name} (${system.software})${cuda}, driver not known`,
    reason: `no --driver given, and no source gives the driver ${system.name} ships${system.cuda ? ` (only that it runs CUDA ${system.cuda})` : ""}: planned as for an unknown driver; pass --driver (nvidia-smi shows it)`,
    sources,
  };
}

/** This machine (or a saved snapshot of one): its first GPU, its driver, CPU and Python. */
/**
 * A snapshot value that becomes part of the plan (and of messages and generated files): one short
 * printable line, as nvidia-smi and Python print them (NVML's name buffer is 96 bytes). An edited
 * snapshot can hold anything.
 */
function snapshotValue(value: string, what: string, origin: string): void {
  // eslint-disable-next-line no-control-regex
  if (value.length <= 96 && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value)) return;
  throw new UserError(
    `${origin}: the ${what} "${printablePrefix(value, 40)}" holds control characters or is longer than 96 characters`,
    "capture the snapshot again with `gpuprep doctor --save FILE`",
  );
}

type SnapshotGpu = Facts["host"]["nvidia"]["gpus"][number];
type TorchDevice = NonNullable<Facts["python"]["torchLive"]["result"]>["devices"][number];

/**
 * The edge where a snapshot's capability becomes the value the planner carries: nvidia-smi's text
 * where it gave one, else torch's pair; null when the text (`cc`, as the plan writes it) is not MAJOR.MINOR.
 */
function snapshotCapability(
  cc: string,
  gpu: SnapshotGpu,
  torchDevice: TorchDevice | undefined,
): ComputeCapability | null {
  if (!/^\d{1,2}\.\d{1,2}$/.test(cc)) return null;
  if (gpu.computeCapability) return smiCapability(gpu);
  return torchDevice ? torchCapability(torchDevice) : null;
}

/** The snapshot's driver as a value; null where nvidia-smi gave none; refused where it is not a version. */
function snapshotDriver(nvidia: Facts["host"]["nvidia"], origin: string): DriverVersion | null {
  if (nvidia.driverVersion === null) return null;
  const driver = /^\d{1,4}(\.\d{1,4}){0,3}$/.test(nvidia.driverVersion) ? smiDriver(nvidia) : null;
  if (!driver)
    throw new UserError(
      `${singleLine(origin)}: driver version ${quotedForMessage(nvidia.driverVersion)} is not a version`,
      "save the snapshot again with `gpuprep doctor --save`",
    );
  return driver;
}

export function targetFromFacts(kb: KnowledgeBase, facts: Facts, origin: string): TargetMachine {
  const nvidia = facts.host.nvidia;
  const gpu = nvidia.gpus[0];
  const torchDevice = facts.python.torchLive.result?.devices[0];
  const cc = gpu?.computeCapability ?? (torchDevice ? torchDevice.capability.join(".") : null);
  if (!gpu || !cc) {
    throw new UserError(
      `${origin} has no NVIDIA GPU that gpuprep can see (nvidia-smi: ${nvidia.status}${nvidia.error ? `, ${printablePrefix(nvidia.error, 80)}` : ""})`,
      "plan for the machine it will run on: --target dgx-spark, --target rtx-5090, or --gpu NAME --driver VER --arch aarch64",
    );
  }
  for (const g of nvidia.gpus) snapshotValue(g.name, "GPU name", origin);
  snapshotValue(cc, "compute capability", origin);
  if (nvidia.driverVersion !== null) snapshotValue(nvidia.driverVersion, "driver version", origin);
  snapshotValue(facts.python.interpreter.version, "Python version", origin);
  const cpuArch = parseCpuArch(facts.host.cpuArch, "the target's CPU architecture");
  // A snapshot may come from anywhere (--from): what it says is written into generated files,
  // so the compute capability and driver must have their shapes and names lose control characters.
  const capability = snapshotCapability(cc, gpu, torchDevice);
  if (!capability)
    throw new UserError(
      `${singleLine(origin)}: compute capability ${quotedForMessage(cc)} is not MAJOR.MINOR`,
      "save the snapshot again with `gpuprep doctor --save`",
    );
  const driverVersion = nvidia.driverVersion;
  const driver = snapshotDriver(nvidia, origin);
  const row = kb.gpu(gpu.name) ?? kb.firstGpuWith(capability);
  const kinds = new Set(nvidia.gpus.map((g) => singleLine(g.name)));
  const first = singleLine(gpu.name);
  return {
    origin: singleLine(origin),
    gpuName:
      kinds.size > 2
        ? `${first} (and ${kinds.size - 1} other models)`
        : kinds.size > 1
          ? `${first} (and ${[...kinds].slice(1).join(", ")})`
          : first,
    computeCapability: cc,
    capability,
    cpuArch,
    driverVersion,
    driver,
    unifiedMemory: row?.unifiedMemory ?? false,
    python: facts.python.interpreter.version,
    gpuPresent: nvidia.status === "ok",
  };
}
