/** A driver written in a test ("580.95.05", "570") as the value the KB queries and the planner take. */
import { parseDriverVersion, type DriverVersion } from "../../src/vocabulary/driver-version.js";

export function asDriver(text: string): DriverVersion {
  const driver = parseDriverVersion(text);
  if (!driver) throw new Error(`test: "${text}" is not a driver version`);
  return driver;
}
