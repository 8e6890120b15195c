/**
 * Which ptxas each Triton release bundles (one for every target, and from 3.6 a second one for
 * arch >= 100) and which --gpu-name targets each ptxas assembles: src/kb/data/triton-ptxas.json,
 * every row with its source, the ptxas rows measured by running them (bench/device/triton-ptxas.sh,
 * docs/kb-evidence/triton-ptxas.md) where a binary was at hand.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { sourceSchema } from "../schema.js";
import { compareVersions } from "../../util/version.js";

const version = z.string().regex(/^\d+(\.\d+)+$/);
const target = z.string().regex(/^sm_\d{2,3}[af]?$/);
const rowBase = {
  confidence: z.enum(["measured", "secondary"]),
  sources: z.array(sourceSchema).min(1),
};

const tableSchema = z.object({
  table: z.literal("tritonPtxas"),
  tritons: z.array(
    z.object({ triton: version, ptxas: version, ptxasBlackwell: version.nullable(), ...rowBase }),
  ),
  ptxas: z.array(
    z.object({
      cuda: z.string().regex(/^\d+\.\d+$/),
      build: version,
      accepts: z.array(target),
      rejects: z.array(target),
      ...rowBase,
    }),
  ),
});

type TritonPtxasTable = z.infer<typeof tableSchema>;
type TritonRow = TritonPtxasTable["tritons"][number];
let cached: TritonPtxasTable | null = null;

export function tritonPtxasTable(): TritonPtxasTable {
  cached ??= tableSchema.parse(
    JSON.parse(readFileSync(new URL("../data/triton-ptxas.json", import.meta.url), "utf8")),
  );
  return cached;
}

/** "sm_121a": the --gpu-name Triton passes for a capability (compiler.py sm_arch_from_capability: "a" from 9.0). */
export function tritonGpuName(major: number, minor: number): string {
  const arch = major * 10 + minor;
  return `sm_${arch}${arch >= 90 ? "a" : ""}`;
}

/** Whether a ptxas of this CUDA release assembles `gpuName`: true, false, or null when no row says. */
export function ptxasAccepts(cudaRelease: string, gpuName: string): boolean | null {
  const row = tritonPtxasTable().ptxas.find((r) => r.cuda === cudaRelease);
  if (!row) return null;
  if (row.accepts.includes(gpuName)) return true;
  if (row.rejects.includes(gpuName)) return false;
  return null;
}

/** The ptxas a Triton release runs for this arch (by its bundled binaries), or null when not known. */
function bundledPtxasFor(row: TritonRow, arch: number): string {
  return arch >= 100 && row.ptxasBlackwell ? row.ptxasBlackwell : row.ptxas;
}

/** The oldest Triton release in the table whose bundled ptxas for this capability assembles its target. */
export function oldestTritonFor(major: number, minor: number): TritonRow | null {
  const gpuName = tritonGpuName(major, minor);
  const rows = [...tritonPtxasTable().tritons].sort((a, b) => compareVersions(a.triton, b.triton));
  return (
    rows.find(
      (row) =>
        ptxasAccepts(
          bundledPtxasFor(row, major * 10 + minor)
            .split(".")
            .slice(0, 2)
            .join("."),
          gpuName,
        ) === true,
    ) ?? null
  );
}
