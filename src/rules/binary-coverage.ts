/**
 * Shared by the three binary-coverage rules: each CUDA binary the scan found (facts.binaries),
 * its owner (torch itself, or the package directory it sits in) and its verdict per GPU.
 */
import type { BinaryCoverage, Facts } from "../facts/schema.js";
import { coverageFor, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";
import { deviceCapabilities } from "./view.js";

export interface BinaryVerdict {
  file: BinaryCoverage;
  /** "torch" for torch's own libraries, else the top-level package directory (xformers, nvidia). */
  owner: string;
  device: { cc: ComputeCapability; name: string };
  verdict: CoverageVerdict;
}

/** The top-level directory under the sys.path entry that holds the file, or the file name. */
export function ownerOf(path: string, sysPath: string[]): string {
  const root = sysPath
    .filter((entry) => entry && path.startsWith(entry.endsWith("/") ? entry : entry + "/"))
    .sort((a, b) => b.length - a.length)[0];
  const rest = root ? path.slice(root.length).replace(/^\/+/, "") : path;
  return rest.split("/")[0] ?? rest;
}

export function binaryVerdicts(facts: Facts): BinaryVerdict[] {
  if (!facts.binaries.scanned) return [];
  const devices = deviceCapabilities(facts);
  const verdicts: BinaryVerdict[] = [];
  for (const file of facts.binaries.files) {
    const targets = [...file.sass, ...file.ptx];
    if (file.error || targets.length === 0) continue;
    const owner = ownerOf(file.path, facts.python.interpreter.sysPath);
    for (const device of devices) {
      verdicts.push({ file, owner, device, verdict: coverageFor(targets, device.cc) });
    }
  }
  return verdicts;
}

export function archListFor(cc: ComputeCapability): string {
  return `${cc.major}.${cc.minor}`;
}

/** "libx.so (sm_80 sm_86)" for evidence lines. */
export function describeFile(file: BinaryCoverage): string {
  const targets = [...file.sass, ...file.ptx].join(" ");
  return `${file.path} (${targets})`;
}
