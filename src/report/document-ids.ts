/**
 * The ids and versions of the JSON documents the CLI builds itself (the others sit beside the
 * types they describe: facts, doctor, validate, memory). Plain constants, no zod, so the CLI's
 * start does not pay for the schemas. Bump a version on any incompatible change (docs/json.md).
 */
export const SCAN_SCHEMA = "gpuprep.scan";
export const SCAN_SCHEMA_VERSION = 1;
export const INIT_SCHEMA = "gpuprep.init";
export const INIT_SCHEMA_VERSION = 2;
export const KB_SCHEMA = "gpuprep.kb";
export const KB_SCHEMA_VERSION = 2;
export const FLEET_SCHEMA = "gpuprep.fleet";
export const FLEET_SCHEMA_VERSION = 1;
/** The id itself is the Slurm job file's (transports/slurm-batch.ts JOB_META_SCHEMA). */
export const FLEET_JOB_SCHEMA_VERSION = 1;
export const ERROR_SCHEMA_ID = "gpuprep.error";
export const ERROR_SCHEMA_VERSION = 1;
