/**
 * A snapshot's content without the fields that only name it (target.ref, host.hostname,
 * capturedAt). Two nodes with equal keys hold the same environment, so a fleet validates and
 * diagnoses it once: no rule reads those fields (target.python and target.kind stay in the key).
 */
export function factsContentKey(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  const facts = data as Record<string, unknown>;
  const target = facts["target"];
  const host = facts["host"];
  if (typeof target !== "object" || target === null || typeof host !== "object" || host === null) return null;
  return JSON.stringify({
    ...facts,
    capturedAt: null,
    target: { ...target, ref: null },
    host: { ...host, hostname: null },
  });
}
