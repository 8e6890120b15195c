/**
 * Kernel provenance on the benchmark items, and the judged default SDPA call: a math fallback on a
 * GPU is a finding with what made torch refuse the fused backends (dtype, head dim, mask, arch,
 * switches).
 */
import type { z } from "zod";
import {
  KernelsDataSchema,
  SdpaDataSchema,
  type KernelOp,
  type Payload,
  type PayloadEnv,
} from "./payload.js";
import type { Provenance, ValidationItem } from "./report.js";
import { provenanceOf } from "./provenance.js";

type SdpaData = z.infer<typeof SdpaDataSchema>;
type SdpaCase = SdpaData["cases"][number];

const FUSED = new Set(["flash", "cudnn", "efficient"]);

function kernelOps(payload: Payload): KernelOp[] {
  const result = payload.benchmarks.results.find((r) => r.name === "kernels" && r.data);
  const parsed = result ? KernelsDataSchema.safeParse(result.data) : null;
  return parsed?.success ? parsed.data.ops : [];
}

function sdpaData(payload: Payload): SdpaData | null {
  const result = payload.benchmarks.results.find((r) => r.name === "sdpa" && r.data);
  const parsed = result ? SdpaDataSchema.safeParse(result.data) : null;
  return parsed?.success ? parsed.data : null;
}

const shapeKey = (shape: readonly number[]) => shape.join("x");

/** The item id an operation's provenance belongs to (matching judge-benchmarks' ids). */
function itemIdOf(op: KernelOp): string | null {
  if (op.op === "matmul") return `bench.matmul.${op.dtype}.${op.n}`;
  if (op.op === "feature") return `bench.features.${op.feature}`;
  if (op.op === "sdpa" && op.shape) return `bench.sdpa.${op.dtype}.${shapeKey(op.shape)}.${op.backend}`;
  return null;
}

/** Each benchmark item gets the kernels its operation ran, where the kernel capture has them. */
export function attachProvenance(items: ValidationItem[], payload: Payload): ValidationItem[] {
  const byId = new Map<string, Provenance>();
  for (const op of kernelOps(payload)) {
    const id = itemIdOf(op);
    if (id) byId.set(id, provenanceOf(op));
  }
  return items.map((item) => {
    const provenance = byId.get(item.id);
    return provenance ? { ...item, provenance } : item;
  });
}

function describeShape(c: { dtype?: string | null; shape?: number[] | undefined }): string {
  const [b, h, s, d] = c.shape ?? [];
  return `${c.dtype} B${b} H${h} S${s} D${d}`;
}

/** Why torch did not take a fused backend for this case: its own refusals, the switches, the facts. */
function fallbackReasons(op: KernelOp, sdpaCase: SdpaCase | undefined, env: PayloadEnv | null): string {
  const reasons: string[] = [];
  const switches = (env as Record<string, unknown> | null)?.["sdpaEnabled"] as
    Record<string, boolean | null> | undefined;
  const off = ["flash", "efficient", "cudnn"].filter((name) => switches?.[name] === false);
  if (off.length > 0)
    reasons.push(`${off.join(", ")} switched off in this process (torch.backends.cuda.enable_*_sdp(False))`);
  for (const [name, run] of Object.entries(sdpaCase?.backends ?? {})) {
    if (FUSED.has(name) && run.available === false && run.reason)
      reasons.push(`${name}: ${run.reason.slice(0, 200)}`);
  }
  const device = env?.devices[0];
  const headDim = op.shape?.[3];
  const facts = `${op.dtype}, head dim ${headDim}, ${op.mask === "none" || !op.mask ? "no mask" : `mask ${op.mask}`}${device ? `, sm_${device.capability.join("")}` : ""}`;
  return `${reasons.length > 0 ? reasons.join("; ") : "torch gave no reason"} (${facts})`;
}

/** One item per SDPA case: which backend the default call (no backend forced) ran. */
export function judgeDefaultSdpa(payload: Payload): ValidationItem[] {
  const env = payload.env.result;
  const onGpu = Boolean(env?.cudaAvailable);
  const data = sdpaData(payload);
  const items: ValidationItem[] = [];
  for (const op of kernelOps(payload).filter((o) => o.op === "sdpa" && o.backend === "default")) {
    const shape = describeShape(op);
    const id = `bench.sdpa.${op.dtype}.${shapeKey(op.shape ?? [])}.default`;
    const title = `SDPA default call ${shape}`;
    const sdpaCase = data?.cases.find(
      (c) =>
        c.dtype === op.dtype && shapeKey([c.batch, c.heads, c.seq, c.headDim]) === shapeKey(op.shape ?? []),
    );
    const provenance = provenanceOf(op);
    const speedup = sdpaCase?.default?.speedup;
    const measured = speedup ? { measured: { value: speedup, unit: "x manual" } } : {};
    const speed = speedup ? `, ${speedup.toFixed(2)}x manual attention` : "";
    const kernel = provenance.kernels[0] ? ` (${provenance.kernels[0].slice(0, 90)})` : "";
    const base = { id, group: "benchmark" as const, category: "sdpa", title, provenance, ...measured };
    if (FUSED.has(provenance.backend)) {
      items.push({ ...base, status: "pass", reason: `ran ${provenance.backend}${kernel}${speed}` });
    } else if (provenance.backend === "math" && onGpu) {
      items.push({
        ...base,
        status: "warn",
        reason: `the default call fell back to the math backend${kernel}${speed} on a GPU that has fused kernels: ${fallbackReasons(op, sdpaCase, env)}`,
      });
    } else {
      const what =
        provenance.backend === "math"
          ? "ran math (the CPU test mode: not judged)"
          : `the profiler saw ${provenance.backend === "none" ? "no kernel" : "no attention kernel it knows"}`;
      items.push({ ...base, status: "info", reason: `${what}${kernel}${speed}` });
    }
  }
  return items;
}
