/**
 * Compile-time agreement between a zod schema and the hand-written type it describes: a field
 * added to one and not the other breaks the build, so a shipped JSON Schema cannot fall behind
 * the code that prints the document (the pattern of src/kb/schema.ts).
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
