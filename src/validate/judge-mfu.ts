/**
 * MFU of a real training step: the model built from --model's config, a few timed steps under bf16
 * autocast, FLOPs per token as PaLM counts them (6 N + 12 L H Q T), held against the GPU's dense
 * bf16 peak. Reported, not judged: a small model or a short sequence has a low MFU by nature.
 */
import type { GpuPeak } from "./peaks.js";
import type { ValidationItem } from "./report.js";
import type { MfuResult, Payload } from "./payload.js";
import { describeRun } from "./judge-checks.js";
import { densePeak } from "./peaks.js";
import { stepAttention, stepGemm } from "./provenance.js";

const TITLE = "MFU of a training step";

function item(
  status: ValidationItem["status"],
  reason: string,
  extra: Partial<ValidationItem> = {},
): ValidationItem {
  return { id: "bench.mfu", group: "benchmark", category: "mfu", title: TITLE, status, reason, ...extra };
}

const ERROR_HINTS: Record<string, string> = {
  oom: "; try a smaller --batch or --seq-len (`gpuprep memory` sizes the step)",
  config: "; --model needs a Hugging Face config.json with model_type",
};

export function judgeMfu(payload: Payload, peak: GpuPeak | null): ValidationItem[] {
  const mfu = payload.mfu;
  if (!mfu) return [];
  if (mfu.skipped) return [item("skip", mfu.skipped)];
  if (!mfu.run) return [item("fail", "did not run")];
  const r = mfu.result;
  if (!r) return [item("fail", describeRun(mfu.run))];
  if (r.error) {
    if (r.kind === "no-transformers" || r.kind === "device") return [item("skip", r.error)];
    return [item("fail", `${r.error}${ERROR_HINTS[r.kind ?? ""] ?? ""}`)];
  }
  return [stepItem(r, peak), ...attentionItem(r, Boolean(payload.env.result?.cudaAvailable))];
}

function stepItem(r: MfuResult, peak: GpuPeak | null): ValidationItem {
  const achieved = r.achievedTflops ?? 0;
  const measured = { value: achieved, unit: "TFLOP/s" };
  const millions = (r.parameters ?? 0) / 1e6;
  const model = `${r.modelClass} ${millions.toFixed(millions < 10 ? 2 : 0)}M parameters (${r.layers} layers, ${r.heads} heads of ${r.headDim})`;
  const shape = `batch ${r.batch} x seq ${r.seqLen}, bf16 autocast, AdamW`;
  const speed = `${Math.round(r.tokensPerSecond ?? 0).toLocaleString("en-US")} tokens/s, median step ${r.medianStepMs?.toFixed(1)} ms of ${r.steps}`;
  const flops = `${((r.flopsPerToken ?? 0) / 1e9).toFixed(2)} GFLOP/token (6 x ${((r.matmulWeights ?? 0) / 1e6).toFixed(0)}M matmul weights + 12 L H Q T attention)`;
  const kernels = r.kernels
    ? `; attention ran ${stepAttention(r.kernels).backend}, GEMMs ${stepGemm(r.kernels).backend}`
    : "";
  if (r.lossFinite === false) return item("fail", `the loss is NaN/Inf: ${model}, ${shape}`, { measured });
  const dense = densePeak(peak, "bf16");
  const text = `${model}, ${shape}: ${speed}, ${achieved.toFixed(1)} TFLOP/s at ${flops}`;
  if (typeof dense !== "number" || !peak)
    return item("info", `${text}; no bf16 peak known for this GPU, so no MFU${kernels}`, { measured });
  const ratio = achieved / dense;
  return item(
    "info",
    `${text}: MFU ${(ratio * 100).toFixed(1)}% of the ${dense} TFLOP/s dense bf16 peak${kernels}`,
    {
      measured,
      reference: { value: dense, unit: "TFLOP/s", what: `${peak.name} dense bf16 peak` },
      ratio,
    },
  );
}

/** The attention of the model's own step: a math fallback there costs the most. */
function attentionItem(r: MfuResult, onGpu: boolean): ValidationItem[] {
  if (!r.kernels) return [];
  const provenance = stepAttention(r.kernels);
  const title = `attention in the training step (${r.attnImplementation ?? "?"}, head dim ${r.headDim})`;
  const base = { id: "bench.mfu.attention", group: "benchmark" as const, category: "mfu", title, provenance };
  const first = provenance.kernels[0] ? ` (${provenance.kernels[0].slice(0, 90)})` : "";
  if (["flash", "cudnn", "efficient"].includes(provenance.backend))
    return [{ ...base, status: "pass", reason: `ran ${provenance.backend}${first}` }];
  if (provenance.backend === "math" && onGpu)
    return [
      {
        ...base,
        status: "warn",
        reason: `the model's attention ran the math backend${first}: no fused kernel for bf16, head dim ${r.headDim} with its mask on this GPU, or attn_implementation "${r.attnImplementation}" is not SDPA`,
      },
    ];
  return [{ ...base, status: "info", reason: `attention kernels: ${provenance.backend}${first}` }];
}
