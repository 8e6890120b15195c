/**
 * Which build of torch a PyTorch index, a wheel's local version or a pin names: a CUDA variant
 * ("cu128"), the CPU build, ROCm or XPU. One parser for every place a project names one, so doctor's
 * install prediction and init's plan read the same URL the same way (issue 23): the stable, nightly
 * and test channels, download.pytorch.org and its download-r2 mirror, two- and three-digit CUDA tags
 * (cu92 ... cu130).
 */
import type { CudaVersion } from "./cuda-version.js";

export type TorchVariant =
  | { readonly kind: "cuda"; readonly tag: string; readonly cuda: CudaVersion }
  | { readonly kind: "cpu"; readonly tag: "cpu" }
  | { readonly kind: "rocm"; readonly tag: string }
  | { readonly kind: "xpu"; readonly tag: "xpu" };

/** The release channel of a PyTorch index: /whl/X (stable), /whl/nightly/X, /whl/test/X (release candidates). */
type TorchChannel = "stable" | "nightly" | "test";

export interface TorchIndex {
  variant: TorchVariant;
  channel: TorchChannel;
  url: string;
}

/** "cu128" -> CUDA 12.8; "cu92" -> 9.2; "cpu"; "rocm6.2.4"; "xpu". null for anything else. */
export function parseTorchVariant(tag: string): TorchVariant | null {
  const text = tag.trim().toLowerCase();
  if (text === "cpu") return { kind: "cpu", tag: "cpu" };
  if (text === "xpu") return { kind: "xpu", tag: "xpu" };
  if (/^rocm\d+(\.\d+){0,2}$/.test(text)) return { kind: "rocm", tag: text };
  const cuda = /^cu(\d{2,3})$/.exec(text);
  if (!cuda) return null;
  const digits = cuda[1]!;
  // The last digit is the minor release: cu92 = 9.2, cu118 = 11.8, cu130 = 13.0 (the digits are
  // read as numbers here, not written out as "11.8" for parseCudaVersion to read again).
  const version: CudaVersion = {
    major: Number(digits.slice(0, -1)),
    minor: Number(digits.slice(-1)),
    patch: null,
  };
  return { kind: "cuda", tag: text, cuda: version };
}

const PYTORCH_INDEX =
  /^https?:\/\/download(?:-r2)?\.pytorch\.org\/whl\/(?:(nightly|test)\/)?([a-z0-9.]+)\/?(?:simple\/?)?$/i;

/** A PyTorch wheel index URL as its variant and channel; null for any other index (PyPI, a mirror). */
export function torchIndexFromUrl(url: string): TorchIndex | null {
  const match = PYTORCH_INDEX.exec(url.trim());
  if (!match) return null;
  const variant = parseTorchVariant(match[2]!);
  if (!variant) return null;
  return {
    variant,
    channel: (match[1]?.toLowerCase() as TorchChannel | undefined) ?? "stable",
    url: url.trim(),
  };
}

/** The variant of a local version: "2.5.1+cu124" -> cu124; "2.9.0a0+145a3a7bda" (no variant) -> null. */
export function torchVariantOfLocal(version: string): TorchVariant | null {
  const local = /\+([a-z0-9.]+)$/i.exec(version.trim());
  return local ? parseTorchVariant(local[1]!) : null;
}

/** The variant a CUDA build of torch is published under on PyTorch's index ("12.8.1" -> cu128); CPU for null. */
export function torchVariantOfCuda(cuda: CudaVersion | null): TorchVariant {
  if (cuda === null) return { kind: "cpu", tag: "cpu" };
  return { kind: "cuda", tag: `cu${cuda.major}${cuda.minor}`, cuda };
}
