/**
 * The NVIDIA driver in Facts, as a value. nvidia-smi writes it as text ("580.95.05", kept as text in
 * the snapshot); this reader is the edge where it becomes a DriverVersion for the rules.
 */
import { parseDriverVersion, type DriverVersion } from "../vocabulary/driver-version.js";

/** nvidia-smi's driver; null where it gave none, or something that is not a driver version. */
export function smiDriver(nvidia: { driverVersion: string | null }): DriverVersion | null {
  return nvidia.driverVersion === null ? null : parseDriverVersion(nvidia.driverVersion);
}
