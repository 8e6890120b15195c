/** Payload + knowledge base -> ValidateReport: a pure function, so a saved run can be judged again anywhere. */
import { knowledgeBaseOverlay, type KnowledgeBase } from "../kb/index.js";
import { makeEnvelope } from "../json-envelope.js";
import { MatmulDataSchema, type Payload } from "./payload.js";
import { gpuPeakFor, type GpuPeak } from "./peaks.js";
import {
  REPORT_SCHEMA_ID,
  REPORT_SCHEMA_VERSION,
  summarize,
  type ValidateReport,
  type ValidationItem,
} from "./report.js";
import { fromJudgment, judgeChecks, sdpaSwitches } from "./judge-checks.js";
import { judgeTf32 } from "../judge/tf32.js";
import { judgeBenchmarks } from "./judge-benchmarks.js";
import { attachProvenance, judgeDefaultSdpa } from "./judge-kernels.js";
import { judgeJit } from "./judge-jit.js";
import { judgeMfu } from "./judge-mfu.js";
import { featureMatrix } from "./judge-features.js";

interface JudgeOptions {
  transport: string;
  /** The capture's own time, when a saved run is judged again (--from): kept, and judgedAt added. */
  createdAt?: string;
  /** Judge against these peaks instead of the knowledge base's (tests; a GPU the KB lacks). */
  peak?: GpuPeak | null;
}

export function judgePayload(payload: Payload, kb: KnowledgeBase, options: JudgeOptions): ValidateReport {
  const env = payload.env.result;
  const device = env?.devices[0] ?? null;
  const peak = options.peak !== undefined ? options.peak : device ? gpuPeakFor(kb, device.name) : null;
  const ccMajor = device ? device.capability[0] : null;
  const items = attachProvenance(
    [
      ...judgeChecks(payload, kb),
      ...tf32Setting(payload),
      ...(env ? sdpaSwitches(env) : []),
      ...judgeJit(payload),
      ...judgeBenchmarks(payload, { peak, ccMajor }),
      ...judgeDefaultSdpa(payload),
      ...judgeMfu(payload, peak),
    ],
    payload,
  );
  const matrix = featureMatrix(payload, peak);
  return {
    ...makeEnvelope(REPORT_SCHEMA_ID, REPORT_SCHEMA_VERSION, knowledgeBaseOverlay()),
    createdAt: options.createdAt ?? new Date().toISOString(),
    ...(options.createdAt ? { judgedAt: new Date().toISOString() } : {}),
    transport: options.transport,
    python: payload.python,
    torch: env ? { version: env.torch.version, cuda: env.torch.cuda ?? null } : null,
    gpu: device ? { name: device.name, computeCapability: device.capability.join("."), peak } : null,
    summary: summarize(items),
    items,
    ...(matrix.length > 0 ? { featureMatrix: matrix } : {}),
    payload,
  };
}

/**
 * TF32 for float32 matmuls, judged as doctor's tf32-disabled (src/judge/tf32.ts); validate adds
 * the measured float32 / TF32 gap when the matmul benchmark ran both.
 */
function tf32Setting(payload: Payload): ValidationItem[] {
  const env = payload.env.result;
  if (!env || env.devices.length === 0) return [];
  const judgment = judgeTf32({
    device: env.devices[0] ?? null,
    allowTf32: env.tf32.matmul,
    precision: env.tf32.float32MatmulPrecision,
  });
  const matmul = payload.benchmarks.results.find((r) => r.name === "matmul" && r.data);
  let gap = "";
  if (matmul && judgment.verdict !== "pass" && judgment.verdict !== "skip") {
    const cases = MatmulDataSchema.parse(matmul.data).cases;
    const best = (dtype: string) =>
      Math.max(0, ...cases.filter((c) => c.dtype === dtype).map((c) => c.tflops ?? 0));
    if (best("tf32") > 0 && best("float32") > 0) {
      gap = ` Measured here: ${best("float32").toFixed(0)} TFLOP/s in float32 vs ${best("tf32").toFixed(0)} with TF32.`;
    }
  }
  return [fromJudgment("tf32", "tf32", "TF32 for float32 matmuls", judgment, gap)];
}
