/** The judged result of one validate run: what the CLI prints, saves as JSON and renders. */
import type { Payload } from "./payload.js";
import type { Envelope } from "../json-envelope.js";
import type { Status } from "../judge/vocabulary.js";
import type { GpuPeak } from "./peaks.js";

// One vocabulary with doctor's severities (src/judge/vocabulary.ts maps one to the other).
export type { Status } from "../judge/vocabulary.js";

interface Figure {
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
  /** Where the status comes from a ratio: the pass and warn limits it was held against (drawn in HTML). */
  limits?: { pass: number; warn: number };
  /** Which kernels the operation ran (torch.profiler) and the backend they mean. */
  provenance?: Provenance;
}

export interface Provenance {
  /**
   * SDPA: flash, cudnn, efficient, math; GEMM: cuBLAS, cuBLASLt, CUTLASS; cpu (the CPU test mode);
   * none (the profiler saw no kernel); unknown (kernels none of the rules name).
   */
  backend: string;
  /** The busiest kernels (at most five), as the profiler names them. */
  kernels: string[];
}

/** One cell of the feature matrix: a format or backend on this GPU with this build. */
export interface FeatureCell {
  /** "bf16 GEMM", "fp8 e4m3 GEMM", "SDPA flash", "NCCL all-reduce". */
  feature: string;
  /** The knowledge base's format key (bf16, fp8, int8, ...), null for SDPA and NCCL. */
  format: string | null;
  /** What the knowledge base says of the architecture: it has the format, it has not, or no figure. */
  arch: "yes" | "not-on-arch" | "unknown";
  /** This torch exposes it (API and dtype); null where not asked. */
  available: boolean | null;
  ran: boolean;
  ok: boolean | null;
  measured?: Figure;
  /** The KB's dense peak for the format. */
  peak?: number;
  ratio?: number;
  note: string;
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
  /** When a saved run was judged again (--from, --compare); createdAt stays the capture's time. */
  judgedAt?: string;
  /** Each format and backend: available, ran, speed vs the KB's peak, or not on this architecture. */
  featureMatrix?: FeatureCell[];
  /** The raw payload: lets `--from` judge it again and keeps every figure the items leave out. */
  payload: Payload;
}

export function summarize(items: ValidationItem[]): Record<Status, number> {
  const summary: Record<Status, number> = { pass: 0, warn: 0, fail: 0, skip: 0, info: 0 };
  for (const item of items) summary[item.status] += 1;
  return summary;
}
