/**
 * What `gpuprep scan`'s arguments name, told apart without loading the remote readers (a plain
 * scan's start-up is measured), and the machine they are judged for.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ComputeCapability } from "../kb/compat.js";
import type { TargetPlatform } from "./wheel-tags.js";

export type ScanInput =
  { kind: "wheel"; location: string } | { kind: "image"; ref: string } | { kind: "files"; path: string };

/** A wheel (path or URL), an image (tar, OCI layout, docker://), or files to scan. */
export function classifyInput(text: string): ScanInput {
  if (/^docker:\/\//.test(text)) return { kind: "image", ref: text };
  if (/^https?:\/\//i.test(text)) return { kind: "wheel", location: text };
  if (/\.whl$/i.test(text)) return { kind: "wheel", location: text };
  const info = existsSync(text) ? statSync(text) : null;
  if (info?.isDirectory() && existsSync(join(text, "oci-layout"))) return { kind: "image", ref: text };
  if (info?.isFile() && /\.tar$/i.test(text)) return { kind: "image", ref: text };
  return { kind: "files", path: text };
}

/** The machine the verdicts and the wheel choices are for. */
export interface ScanTarget {
  capability: ComputeCapability | null;
  platform: TargetPlatform;
  /** The CUDA version of the machine's driver, for variant choices; null when not known. */
  driverCuda: string | null;
  /** Capabilities of every GPU the KB knows: what a variant label is offered to. */
  knownCapabilities: ComputeCapability[];
}

/** Whether a scan reads anything not installed (wheels, images, a lock, an index): the remote readers load only then. */
export function readsRemote(scan: {
  inputs: readonly ScanInput[];
  lock: string | null;
  packages: readonly string[];
}): boolean {
  return scan.inputs.some((i) => i.kind !== "files") || scan.lock !== null || scan.packages.length > 0;
}
