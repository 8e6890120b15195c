/** The judged result of one validate run: what the CLI prints, saves as JSON and renders. */
import type { Payload } from "./payload.js";
import type { Envelope } from "../json-envelope.js";
import type { Status } from "../judge/vocabulary.js";

// One vocabulary with doctor's severities (src/judge/vocabulary.ts maps one to the other).
export type { Status } from "../judge/vocabulary.js";

export interface Figure {
  value: number;
  unit: string;
}

export interface ValidationItem {
  /** Stable id: check.cuda-build, bench.matmul.bfloat16.8192 ... */
  id: string;
  group: "check" | "benchmark";
  /** For charts and grouping: torch, gpu, arch, kernel, numpy, extension, model, sdpa, matmul, membw, transfer, nccl. */
  category: string;
  title: string;
  status: Status;
  /** The evidence, and when it is not a pass, what it means or what to do. */
  reason: string;
  /**
   * Where doctor judges the same condition (src/judge/): its rule id, so the same verdict has the
   * same name in both reports, and that rule's page.
   */
  ruleId?: string;
  docs?: string;
  measured?: Figure;
  /** The hardware's own limit this figure is held against. */
  reference?: Figure & { what: string };
  /** measured / reference. */
  ratio?: number;
}

export interface GpuPeak {
  /** The knowledge base's name for the GPU. */
  name: string;
  tflops: { bf16: number | null; fp16: number | null; tf32: number | null; fp32: number | null };
  memoryBandwidthGBs: number | null;
  sources: string[];
}

export const REPORT_SCHEMA_ID = "gpuprep.validate";
/** 2: `tool` became the shared { name, version } object (it was the version string). */
export const REPORT_SCHEMA_VERSION = 2;

export interface ValidateReport extends Envelope {
  schema: typeof REPORT_SCHEMA_ID;
  schemaVersion: typeof REPORT_SCHEMA_VERSION;
  createdAt: string;
  /** How the payload reached the interpreter: only "local" in this build. */
  transport: string;
  python: { executable: string; version: string };
  torch: { version: string; cuda: string | null } | null;
  gpu: { name: string; computeCapability: string; peak: GpuPeak | null } | null;
  summary: Record<Status, number>;
  items: ValidationItem[];
  /** The raw payload: lets `--from` judge it again and keeps every figure the items leave out. */
  payload: Payload;
}

export function summarize(items: ValidationItem[]): Record<Status, number> {
  const summary: Record<Status, number> = { pass: 0, warn: 0, fail: 0, skip: 0, info: 0 };
  for (const item of items) summary[item.status] += 1;
  return summary;
}
