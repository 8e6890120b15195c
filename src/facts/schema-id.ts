/** The snapshot's schema id and version, apart from the zod schema so that writing them costs no zod load. */
export const FACTS_SCHEMA_ID = "gpuprep.facts";
/** Bump on any incompatible change; `--from` refuses other versions with a clear message. */
export const FACTS_SCHEMA_VERSION = 2;
/**
 * Versions `--from` reads. 1: before the torch child was shared with validate (issue 16), the
 * SDPA switch was `memEfficient` (now `efficient`); the schema reads the old key as the new one.
 */
export const FACTS_READABLE_VERSIONS: readonly number[] = [1, 2];
