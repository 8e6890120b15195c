/**
 * The one place a knowledge-base row's compute capability ("9.0"; schema.ts holds every row to that
 * shape) becomes a ComputeCapability, once per distinct text (kb/row-parser.ts).
 */
import { parseComputeCapability, type ComputeCapability } from "../vocabulary/compute-capability.js";
import { rowParser } from "./row-parser.js";

/** The capability a knowledge-base row names; throws on text the schema would have refused. */
export const rowCapability: (text: string) => ComputeCapability = rowParser(
  (text) => parseComputeCapability(text), // the edge test/vocabulary-edges.test.ts counts
  "a compute capability (kb/schema.ts admits only X.Y)",
);
