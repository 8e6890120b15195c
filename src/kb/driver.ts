/**
 * The one place a knowledge-base row's driver version ("580.65.06", or a branch "525"; schema.ts
 * holds them to dotted numbers, and every row has at most three parts, as NVIDIA's Linux drivers
 * do) becomes a DriverVersion, once per distinct text (kb/row-parser.ts).
 */
import { parseDriverVersion, type DriverVersion } from "../vocabulary/driver-version.js";
import { rowParser } from "./row-parser.js";

/** The driver a knowledge-base row names; throws on text the schema would have refused. */
export const rowDriver: (text: string) => DriverVersion = rowParser(
  (text) => parseDriverVersion(text), // the edge test/vocabulary-edges.test.ts counts
  "a driver version (580, 580.65 or 580.65.06)",
);
