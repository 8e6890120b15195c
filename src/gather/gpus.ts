/**
 * The GPU list alone, asked of nvidia-smi through a transport: what `scan` judges for when no
 * --gpu is given. The probe gathers the same facts (and more: the driver's CUDA version, the
 * kernel module) inside its Python; scan needs no Python, so this is the same query and the same
 * reading in TypeScript, fast enough to run beside the file scan.
 *
 * Only types come from facts/schema.ts: its zod schemas cost more start-up than scan's whole read
 * of libtorch_cuda.so.
 */
import type { GpuFacts, HostFacts } from "../facts/schema.js";
import type { Transport } from "../transports/types.js";
import { CommandNotFoundError } from "../transports/spawn.js";

/** The part of the host's nvidia facts that one nvidia-smi query answers. */
type GpuListFacts = Pick<HostFacts["nvidia"], "status" | "error" | "driverVersion" | "gpus">;

/** The probe's query (src/probe/probe.py NVIDIA_QUERY), in the same order. */
export const GPU_QUERY_FIELDS = [
  "index",
  "name",
  "uuid",
  "compute_cap",
  "memory.total",
  "mig.mode.current",
  "persistence_mode",
  "pci.bus_id",
  "driver_version",
  "pcie.link.gen.max",
  "pcie.link.width.max",
  "pcie.link.gen.current",
  "pcie.link.width.current",
] as const;

/** nvidia-smi answers in tens of ms; a wedged driver can hang it, which must not hang scan. */
const NVIDIA_SMI_TIMEOUT_MS = 15_000;

/** "81559" (nounits), also "81559 MiB" from wrappers that ignore nounits; null for "[N/A]". */
function numberCell(cell: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)/.exec(cell);
  return match ? Number(match[1]) : null;
}

/** nvidia-smi writes "[N/A]", "[Not Supported]" or "N/A" where a field has no value. */
function stringCell(cell: string): string | null {
  const value = cell.trim();
  return value === "" || value.startsWith("[") || value === "N/A" ? null : value;
}

/** The CSV of `nvidia-smi --query-gpu=GPU_QUERY_FIELDS --format=csv,noheader,nounits`. */
export function parseGpuQuery(csv: string): { driverVersion: string | null; gpus: GpuFacts[] } {
  let driverVersion: string | null = null;
  const gpus: GpuFacts[] = [];
  for (const line of csv.split("\n")) {
    const cells = line.split(",").map((cell) => cell.trim());
    // A short line is noise; "index" starts a header (a capture made with --format=csv).
    if (cells.length < GPU_QUERY_FIELDS.length || cells[0] === "index") continue;
    const cell = (i: number): string => cells[i] ?? "";
    driverVersion = stringCell(cell(8));
    gpus.push({
      index: numberCell(cell(0)) ?? 0,
      name: cell(1),
      uuid: stringCell(cell(2)),
      computeCapability: stringCell(cell(3)),
      memoryTotalMiB: numberCell(cell(4)),
      migMode: stringCell(cell(5)),
      persistenceMode: stringCell(cell(6)),
      pciBusId: stringCell(cell(7)),
      pcieLinkGenMax: numberCell(cell(9)),
      pcieLinkWidthMax: numberCell(cell(10)),
      pcieLinkGenCurrent: numberCell(cell(11)),
      pcieLinkWidthCurrent: numberCell(cell(12)),
    });
  }
  return { driverVersion, gpus };
}

/**
 * The GPUs where the transport runs. Never throws for a missing or failing nvidia-smi: that is a
 * fact (status not-found / failed with nvidia-smi's first line), as in the probe's host facts.
 */
export async function gatherGpuList(transport: Transport): Promise<GpuListFacts> {
  const none = (status: "not-found" | "failed", error: string): GpuListFacts => ({
    status,
    error,
    driverVersion: null,
    gpus: [],
  });
  let result;
  try {
    result = await transport.runProgram(
      "nvidia-smi",
      [`--query-gpu=${GPU_QUERY_FIELDS.join(",")}`, "--format=csv,noheader,nounits"],
      NVIDIA_SMI_TIMEOUT_MS,
    );
  } catch (error) {
    return error instanceof CommandNotFoundError
      ? none("not-found", "nvidia-smi is not on PATH")
      : none("failed", error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error));
  }
  if (result.timedOut)
    return none("failed", `nvidia-smi did not answer within ${NVIDIA_SMI_TIMEOUT_MS / 1000}s`);
  if (result.code === 127) return none("not-found", "nvidia-smi is not on PATH");
  if (result.code !== 0) {
    const text = `${result.stdout}\n${result.stderr}`.trim();
    return none(
      "failed",
      text.split("\n")[0] || `nvidia-smi exited with ${String(result.code ?? result.signal)}`,
    );
  }
  return { status: "ok", error: null, ...parseGpuQuery(result.stdout) };
}
