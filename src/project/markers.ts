/** The PEP 508 marker environment of a Linux target, from what the project model knows of it. */
import type { MarkerEnvironment } from "../util/pep508-marker.js";
import { majorMinor } from "../util/version.js";

/** Markers of a Linux machine with this CPU; python_version null where the Python is not yet chosen. */
export function linuxMarkers(cpuArch: string, pythonVersion: string | null): MarkerEnvironment {
  return {
    platform_machine: cpuArch,
    sys_platform: "linux",
    platform_system: "Linux",
    os_name: "posix",
    python_version: pythonVersion ? majorMinor(pythonVersion) : null,
  };
}
