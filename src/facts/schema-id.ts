/** The snapshot's schema id and version, apart from the zod schema so that writing them costs no zod load. */
export const FACTS_SCHEMA_ID = "gpuprep.facts";
/** Bump on any incompatible change; `--from` refuses other versions with a clear message. */
export const FACTS_SCHEMA_VERSION = 1;
