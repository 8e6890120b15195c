/**
 * Shared by the three binary-coverage rules: each CUDA binary the scan found (facts.binaries),
 * its owner (torch itself, or the package directory it sits in) and its verdict per GPU.
 */
import type { BinaryCoverage, Facts } from "../facts/schema.js";
import { coverageFor, type ComputeCapability, type CoverageVerdict } from "../kb/compat.js";
import { deviceCapabilities } from "./view.js";

interface BinaryVerdict {
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

/**
 * NVIDIA's CUDA library wheels (site-packages/nvidia/...: cuBLAS, cuFFT, cuDNN, NCCL, cuFile ...)
 * are left out: their GPU coverage follows their CUDA version (the knowledge base's toolkit table),
 * and some keep most kernels outside the fatbin sections. On the H100 capture, libcufft.so.12's
 * fatbin holds a single sm_75 cubin (cuobjdump agrees) although cuFFT runs on every GPU of CUDA 13.
 */
export function isCudaToolkitLibrary(owner: string): boolean {
  return owner === "nvidia";
}

/** Three rules ask for the same verdicts of one snapshot (851 files on the H100): computed once. */
const verdictsOf = new WeakMap<Facts, BinaryVerdict[]>();

export function binaryVerdicts(facts: Facts): BinaryVerdict[] {
  const known = verdictsOf.get(facts);
  if (known) return known;
  const verdicts = computeBinaryVerdicts(facts);
  verdictsOf.set(facts, verdicts);
  return verdicts;
}

function computeBinaryVerdicts(facts: Facts): BinaryVerdict[] {
  if (!facts.binaries.scanned) return [];
  const devices = deviceCapabilities(facts);
  const verdicts: BinaryVerdict[] = [];
  for (const file of facts.binaries.files) {
    const targets = [...file.sass, ...file.ptx];
    if (file.error || targets.length === 0) continue;
    const owner = ownerOf(file.path, facts.python.interpreter.sysPath);
    if (isCudaToolkitLibrary(owner)) continue;
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
