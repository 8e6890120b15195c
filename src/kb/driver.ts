/**
 * The knowledge base writes driver versions as text ("580.65.06", or a branch "525"; schema.ts holds
 * them to dotted numbers, and every row has at most three parts, as NVIDIA's Linux drivers do). This
 * is the one place that text becomes a DriverVersion: once per distinct text, cached, so the
 * queries, the plan and the rules carry the value and never parse a row again.
 */
import { parseDriverVersion, type DriverVersion } from "../vocabulary/driver-version.js";

const parsed = new Map<string, DriverVersion>();

/** The driver a knowledge-base row names; throws on text the schema would have refused. */
export function rowDriver(text: string): DriverVersion {
  const known = parsed.get(text);
  if (known) return known;
  const driver = parseDriverVersion(text);
  if (!driver)
    throw new Error(`knowledge base: "${text}" is not a driver version (580, 580.65 or 580.65.06)`);
  parsed.set(text, driver);
  return driver;
}
