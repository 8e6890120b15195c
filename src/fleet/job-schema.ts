/**
 * The zod form of the Slurm batch job a `fleet --submit` leaves (transports/slurm-batch.ts), for
 * the shipped JSON Schema of `gpuprep.fleet.job`; here because src/report may not import transports.
 */
import { z } from "zod";
import { JOB_META_SCHEMA, type BatchJob } from "../transports/slurm-batch.js";
import type { Same } from "../util/same-type.js";

export { JOB_META_SCHEMA };

export const BatchJobBodySchema = z.object({
  jobId: z.string(),
  mode: z.string(),
  nonce: z.string(),
  probeNonce: z.string().optional(),
  python: z.string(),
  nodeTimeoutSeconds: z.number(),
  script: z.string(),
  output: z.string(),
  /** Nodes reported down when the job was submitted (not asked), with why where known. */
  down: z.array(
    z.object({
      name: z.string(),
      state: z.string(),
      reason: z.string().nullable(),
      why: z.string().optional(),
    }),
  ),
  /** The nodes the job was asked to run on (null: --nodes N, Slurm picks). */
  asked: z.array(z.string()).nullable().optional(),
  /** Nodes taken out of the job while it waited (fleet collect --drop-unavailable), with why. */
  dropped: z.array(z.object({ name: z.string(), why: z.string() })).optional(),
  submittedAt: z.string(),
});

const agree: Same<z.infer<typeof BatchJobBodySchema>, Omit<BatchJob, "schema" | "schemaVersion">> = true;
void agree;
