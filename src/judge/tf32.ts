/**
 * TF32 for float32 matmuls, judged once for doctor (rule tf32-disabled, from the probe's torch
 * import) and validate (check.tf32, from its payload's). TF32 tensor cores exist from compute
 * capability 8.0 (NVIDIA Ampere architecture whitepaper); torch turns them off for float32
 * matmuls by default since 1.12. A choice of precision, not a fault: info, not a warning.
 */
import type { Judgment } from "./vocabulary.js";

export const TF32_DISABLED = {
  id: "tf32-disabled",
  title: "TF32 is off for float32 matmuls",
  severity: "info",
} as const;

const TF32_MIN_MAJOR = 8;

interface Tf32Input {
  /** The first device torch sees; null when it sees none. */
  device: { name: string; capability: readonly [number, number] } | null;
  /** torch.backends.cuda.matmul.allow_tf32; null when reading it failed. */
  allowTf32: boolean | null;
  /** torch.get_float32_matmul_precision(); null or absent when reading it failed (torch < 1.12). */
  precision: string | null | undefined;
}

export function judgeTf32(input: Tf32Input): Judgment {
  const { id } = TF32_DISABLED;
  const { device, allowTf32, precision } = input;
  if (!device) return { id, verdict: "skip", message: "no GPU visible to torch" };
  if (device.capability[0] < TF32_MIN_MAJOR)
    return { id, verdict: "skip", message: "TF32 needs Ampere (sm_80) or newer" };
  // set_float32_matmul_precision("high") turns allow_tf32 on; either says TF32 is in use.
  if (allowTf32 === true)
    return { id, verdict: "pass", message: "torch.backends.cuda.matmul.allow_tf32 is True" };
  // set_float32_matmul_precision("high" or "medium") lets float32 matmuls use TF32 as well.
  if ((precision ?? "highest") !== "highest")
    return { id, verdict: "pass", message: `float32_matmul_precision is "${precision}"` };
  if (allowTf32 === null)
    return { id, verdict: "skip", message: "torch.backends.cuda.matmul.allow_tf32 could not be read" };
  return {
    id,
    verdict: TF32_DISABLED.severity,
    message: `float32 matmuls on ${device.name} use full-precision FP32 instead of TF32 tensor cores (torch's default); models trained in float32 run several times slower than they could.`,
    fix: {
      summary:
        "If TF32's 10-bit mantissa is acceptable for your model, turn it on at start-up (or train in bf16).",
      commands: ['torch.set_float32_matmul_precision("high")'],
    },
  };
}
