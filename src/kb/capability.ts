/**
 * The knowledge base writes compute capabilities as text ("9.0"; schema.ts holds every row to that
 * shape). This is the one place that text becomes a ComputeCapability: once per distinct text,
 * cached, so the queries, the plan and the rules carry the value and never parse a row again.
 */
import { parseComputeCapability, type ComputeCapability } from "../vocabulary/compute-capability.js";

const parsed = new Map<string, ComputeCapability>();

/** The capability a knowledge-base row names; throws on text the schema would have refused. */
export function rowCapability(text: string): ComputeCapability {
  const known = parsed.get(text);
  if (known) return known;
  const cc = parseComputeCapability(text);
  if (!cc)
    throw new Error(`knowledge base: "${text}" is not a compute capability (kb/schema.ts admits only X.Y)`);
  parsed.set(text, cc);
  return cc;
}
