/** A compute capability written in a test ("12.1") as the value the KB queries and the planner take. */
import { parseComputeCapability, type ComputeCapability } from "../../src/vocabulary/compute-capability.js";

export function asCapability(text: string): ComputeCapability {
  const cc = parseComputeCapability(text);
  if (!cc) throw new Error(`test: "${text}" is not a compute capability`);
  return cc;
}
