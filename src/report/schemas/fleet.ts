/** `gpuprep fleet … --json`: the merged report of many nodes, and the job a `--submit` leaves. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { FLEET_JOB_SCHEMA_VERSION, FLEET_SCHEMA, FLEET_SCHEMA_VERSION } from "../document-ids.js";
import { BatchJobBodySchema, JOB_META_SCHEMA } from "../../fleet/job-schema.js";
import type { FleetReport } from "../../fleet/types.js";
import { FindingSchema } from "./findings.js";
import type { Same } from "../../util/same-type.js";

const NodeStatusSchema = z.enum(["ok", "down", "unreachable", "hung", "failed", "garbage"]);
const MergedFindingSchema = FindingSchema.extend({ nodes: z.array(z.string()) });

const FingerprintSchema = z.object({
  gpus: z.string(),
  driver: z.string(),
  driverCuda: z.string(),
  cpuArch: z.string(),
  python: z.string(),
  torch: z.string(),
  torchCuda: z.string(),
  torchArchList: z.string(),
  nccl: z.string(),
  numpy: z.string(),
  extensions: z.string(),
  binaryCoverage: z.string(),
  visibleDevices: z.string(),
  gpuHealth: z.string(),
});

const ReferenceSchema = z.object({
  kind: z.enum(["majority", "baseline"]),
  source: z.string().nullable(),
  description: z.string(),
});

const FleetBodySchema = z.object({
  transport: z.string(),
  mode: z.enum(["doctor", "scan", "validate"]),
  reference: ReferenceSchema,
  nodes: z.array(
    z.object({
      node: z.string(),
      status: NodeStatusSchema,
      reason: z.string().nullable(),
      group: z.string().nullable(),
      durationMs: z.number().nullable(),
      errors: z.number().int(),
      warnings: z.number().int(),
      infos: z.number().int(),
      ruleIds: z.array(z.string()),
      source: z.string().optional(),
      nvidiaLabels: z.record(z.string(), z.string()).optional(),
    }),
  ),
  groups: z.array(z.object({ id: z.string(), fingerprint: FingerprintSchema, nodes: z.array(z.string()) })),
  fleetFindings: z.array(MergedFindingSchema),
  nodeFindings: z.array(MergedFindingSchema),
  summary: z.object({
    nodes: z.number().int(),
    ok: z.number().int(),
    notOk: z.number().int(),
    groups: z.number().int(),
    errors: z.number().int(),
    warnings: z.number().int(),
    infos: z.number().int(),
    exitCode: z.number().int(),
  }),
});

export const FleetReportSchema = z.object({
  ...envelopeShape(FLEET_SCHEMA, FLEET_SCHEMA_VERSION),
  ...FleetBodySchema.shape,
});

/** `fleet … --slurm --submit --json`: the submitted job, to `fleet collect` later. */
export const FleetJobSchema = z.object({
  ...envelopeShape(JOB_META_SCHEMA, FLEET_JOB_SCHEMA_VERSION),
  ...BatchJobBodySchema.shape,
});

const agree: [Same<z.infer<typeof FleetBodySchema>, FleetReport>] = [true];
void agree;
