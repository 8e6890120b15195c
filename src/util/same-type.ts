/**
 * Compile-time agreement between a zod schema and the hand-written type it describes: a field
 * added to one and not the other, optional ones included, breaks the build, so a shipped JSON
 * Schema cannot fall behind the code that prints the document. Mutual assignability (the check of
 * src/kb/schema.ts) misses a missing optional field, so this is TypeScript's identity relation,
 * taken after both sides are flattened (an interface that extends another, an intersection and a
 * Record read the same as the plain object they describe).
 */
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export type Same<A, B> = Identical<Flat<A>, Flat<B>>;
