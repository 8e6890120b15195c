/** Payload + knowledge base -> ValidateReport: a pure function, so a saved run can be judged again anywhere. */
import { knowledgeBaseOverlay, type KnowledgeBase } from "../kb/index.js";
import { makeEnvelope } from "../json-envelope.js";
import { MatmulDataSchema, type Payload } from "./payload.js";
import { gpuPeakFor } from "./peaks.js";
import {
  REPORT_SCHEMA_ID,
  REPORT_SCHEMA_VERSION,
  summarize,
  type GpuPeak,
  type ValidateReport,
  type ValidationItem,
} from "./report.js";
import { judgeChecks } from "./judge-checks.js";
import { judgeBenchmarks } from "./judge-benchmarks.js";

export interface JudgeOptions {
  transport: string;
  createdAt?: string;
  /** Judge against these peaks instead of the knowledge base's (tests; a GPU the KB lacks). */
  peak?: GpuPeak | null;
}

export function judgePayload(payload: Payload, kb: KnowledgeBase, options: JudgeOptions): ValidateReport {
  const env = payload.env.result;
  const device = env?.devices[0] ?? null;
  const peak = options.peak !== undefined ? options.peak : device ? gpuPeakFor(kb, device.name) : null;
  const ccMajor = device ? device.capability[0] : null;
  const items = [
    ...judgeChecks(payload),
    ...tf32Setting(payload, ccMajor),
    ...judgeBenchmarks(payload, { peak, ccMajor }),
  ];
  return {
    ...makeEnvelope(REPORT_SCHEMA_ID, REPORT_SCHEMA_VERSION, knowledgeBaseOverlay()),
    createdAt: options.createdAt ?? new Date().toISOString(),
    transport: options.transport,
    python: payload.python,
    torch: env ? { version: env.torch.version, cuda: env.torch.cuda ?? null } : null,
    gpu: device ? { name: device.name, computeCapability: device.capability.join("."), peak } : null,
    summary: summarize(items),
    items,
    payload,
  };
}

/**
 * TF32 is off by default in PyTorch (allow_tf32 = False since 1.12), so float32 matmuls run at the
 * FP32 rate on GPUs whose tensor cores do TF32 (Ampere and newer). Worth a warning where models
 * train in float32; the measured gap is shown when both were run.
 */
function tf32Setting(payload: Payload, ccMajor: number | null): ValidationItem[] {
  const env = payload.env.result;
  if (!env || ccMajor === null) return [];
  const title = "TF32 for float32 matmuls";
  const base = { id: "check.tf32", group: "check" as const, category: "tf32", title };
  if (ccMajor < 8) return [{ ...base, status: "skip", reason: "TF32 needs Ampere (sm_80) or newer" }];
  if (env.tf32.matmul)
    return [{ ...base, status: "pass", reason: "torch.backends.cuda.matmul.allow_tf32 is True" }];
  const matmul = payload.benchmarks.results.find((r) => r.name === "matmul" && r.data);
  let gap = "";
  if (matmul) {
    const cases = MatmulDataSchema.parse(matmul.data).cases;
    const best = (dtype: string) =>
      Math.max(0, ...cases.filter((c) => c.dtype === dtype).map((c) => c.tflops ?? 0));
    if (best("tf32") > 0 && best("float32") > 0) {
      gap = ` (measured here: ${best("float32").toFixed(0)} TFLOP/s in float32 vs ${best("tf32").toFixed(0)} with TF32)`;
    }
  }
  return [
    {
      ...base,
      status: "warn",
      reason: `TF32 is off (float32_matmul_precision "${env.tf32.float32MatmulPrecision ?? "?"}"): float32 matmuls run at the FP32 rate${gap}; where float32 training is meant, call torch.set_float32_matmul_precision("high")`,
    },
  ];
}
