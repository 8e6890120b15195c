/**
 * Runs memory.py (the trace tier and the measured trial) in the target Python through any
 * Transport, and reads its one result frame (transports/payload-frame.ts). The frame carries a
 * per-run nonce, so nothing the user's factory or a library prints can pass for the result.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { UserError } from "../errors.js";
import { pythonBootstrap } from "../transports/node-frame.js";
import { frameChannel, payloadErrorKinds, readFrame } from "../transports/payload-frame.js";
import type { RunResult, Transport } from "../transports/types.js";
import type { ModelSource, WorkSpec } from "./types.js";

const MEMORY_PAYLOAD_PATH = fileURLToPath(new URL("./memory.py", import.meta.url));

export interface MemoryRequest extends WorkSpec {
  mode: "trace" | "trial" | "params";
  /** `data`: the config.json's contents, read here, so a remote Python needs no copy of the file. */
  source: ModelSource & { data?: Record<string, unknown> };
  batch: number;
  /** trial: training steps to time (the confirmation run asks for 20). */
  steps?: number;
  /** trial: "cpu" only for tests on machines without a GPU (peaks are then the process's RSS). */
  device?: "cuda" | "cpu";
  /** trace: "auto" traces on fake CUDA tensors where torch has CUDA, else on fake CPU tensors. */
  traceDevice?: "auto" | "cuda" | "cpu";
  /** trace: what the caching allocator can reach on the card (its model runs out past it). */
  allocatorCapacityBytes?: number | null;
  /** trace: also search min..max for the largest batch whose total fits, in the same process. */
  search?: TraceSearchRequest;
}

/**
 * What memory.py needs to judge a batch as trace-tier.ts traceEstimate does: the usable bytes,
 * the CUDA context and the two safety coefficients; `curve`: batches to report besides the search's.
 */
export interface TraceSearchRequest {
  min: number;
  max: number;
  usableBytes: number;
  contextBytes: number;
  safetyFraction: number;
  convolutionFraction: number;
  curve: number[];
}

const nullableNumber = z.number().nullable().optional();
const PythonSchema = z.object({ executable: z.string(), version: z.string() });
const TorchSchema = z.object({ version: z.string(), cuda: z.string().nullable().optional() });

const AllocatorSchema = z.object({
  peakReservedBytes: z.number(),
  peakAllocatedBytes: z.number(),
  outOfMemory: z.boolean(),
  expandableSegments: z.boolean(),
  events: z.number(),
  stepAllocatedBytes: z.number().optional(),
  convolutionBytes: z.number().optional(),
});

const BreakdownSchema = z.object({
  parameters: z.number(),
  gradients: z.number(),
  optimizerState: z.number(),
  activations: z.number(),
  temporaries: z.number(),
});

/** One batch of memory.py's in-process search: traced, or interpolated from two traced batches. */
const SearchPointSchema = z.object({
  batch: z.number(),
  interpolated: z.array(z.number()).nullable().optional(),
  peakAllocatedBytes: z.number(),
  breakdown: BreakdownSchema,
  allocator: AllocatorSchema,
});

const SearchSchema = z.object({
  maxBatch: z.number().nullable(),
  /** The same search without the safety share: the allocator model's own edge, where --measure starts. */
  likelyMaxBatch: z.number().nullable().optional(),
  traceSeconds: z.array(z.number()).optional(),
  interpolatedFrom: z.array(z.number()).nullable(),
  verified: z.boolean(),
  traces: z.number(),
  seconds: z.number(),
  points: z.array(SearchPointSchema),
});

const TraceOkSchema = z.looseObject({
  status: z.literal("ok"),
  torch: TorchSchema,
  traceDevice: z.enum(["cuda", "cpu"]),
  batch: z.number(),
  peakAllocatedBytes: z.number(),
  breakdown: BreakdownSchema,
  notes: z.array(z.string()),
  parameterCount: z.number(),
  trainableParameterCount: z.number(),
  allocator: AllocatorSchema.optional(),
  search: SearchSchema.optional(),
  traceSeconds: z.number().optional(),
  gpu: z.object({ name: z.string(), capability: z.string(), totalBytes: z.number() }).nullable().optional(),
});

/** One parameter group of a model built on the meta device (memory.py parameter_groups). */
const ParameterGroupSchema = z.object({
  path: z.string(),
  shape: z.array(z.number()),
  role: z.string(),
  dtype: z.string(),
  trainable: z.boolean(),
  count: z.number(),
});

/** The trace could not follow the model: its exact parameters instead, and why. */
const FallbackSchema = z.looseObject({
  status: z.literal("fallback"),
  reason: z.string(),
  torch: TorchSchema,
  parameterCount: z.number(),
  trainableParameterCount: z.number(),
  parameters: z.array(ParameterGroupSchema),
  modelClass: z.string(),
  notes: z.array(z.string()),
});

const TrialSchema = z.looseObject({
  status: z.enum(["ok", "oom"]),
  torch: TorchSchema,
  batch: z.number(),
  steps: z.number(),
  error: z.string().nullable(),
  stepMs: nullableNumber,
  peakAllocatedBytes: nullableNumber,
  peakReservedBytes: nullableNumber,
  deviceUsedBytes: nullableNumber,
  deviceTotalBytes: nullableNumber,
  processUsedBytes: nullableNumber,
  device: z.string().nullable().optional(),
  parameterCount: z.number().optional(),
  trainableParameterCount: z.number().optional(),
  notes: z.array(z.string()).optional(),
});

const FailureSchema = z.looseObject({
  status: z.enum(["error", "unsupported"]),
  errorKind: z.string().optional(),
  error: z.string(),
  torch: TorchSchema.optional(),
});

const CommonSchema = z.looseObject({ seconds: z.number(), python: PythonSchema });

export type TraceResult = z.infer<typeof TraceOkSchema> & z.infer<typeof CommonSchema>;
export type TraceFallback = z.infer<typeof FallbackSchema> & z.infer<typeof CommonSchema>;
export type TrialResult = z.infer<typeof TrialSchema> & z.infer<typeof CommonSchema>;
type PayloadFailure = z.infer<typeof FailureSchema> & z.infer<typeof CommonSchema>;

let source: string | null = null;
function payloadSource(): string {
  source ??= readFileSync(MEMORY_PAYLOAD_PATH, "utf8");
  return source;
}

/** The result frame tagged with `nonce` (transports/payload-frame.ts), or null when there is none. */
export function findFrame(stdout: string, nonce: string): unknown {
  return readFrame(stdout, nonce, "memory");
}

/** Why a run printed no result, in one line (the last line of stderr is usually the reason). */
function noResultReason(run: RunResult, timeoutMs: number): string {
  if (run.timedOut) return `did not finish within ${Math.round(timeoutMs / 1000)} s and was killed`;
  const last = run.stderr.trim().split("\n").slice(-1)[0] ?? "";
  const how = run.signal ? `was killed by ${run.signal}` : `exited with code ${String(run.code)}`;
  return `${how} without a result${last ? `: ${last.slice(0, 300)}` : ""}`;
}

type PayloadOutcome<T> =
  | { kind: "ok"; result: T }
  | { kind: "fallback"; fallback: TraceFallback }
  | { kind: "failed"; failure: PayloadFailure }
  | { kind: "no-result"; reason: string; timedOut: boolean };

/** One run of memory.py there; never throws for what the payload reports, only when it cannot start. */
export async function runMemoryPayload(
  transport: Transport,
  request: MemoryRequest,
  timeoutMs: number,
): Promise<PayloadOutcome<TraceResult | TrialResult>> {
  const channel = frameChannel(transport);
  const run = await transport.runPython(
    pythonBootstrap(channel.header + payloadSource()),
    [JSON.stringify(request)],
    timeoutMs,
    channel.runOptions,
  );
  return parseMemoryOutput(run, channel.nonce, request.mode, timeoutMs);
}

export function parseMemoryOutput(
  run: RunResult,
  nonce: string,
  mode: "trace" | "trial" | "params",
  timeoutMs: number,
): PayloadOutcome<TraceResult | TrialResult> {
  const data = findFrame(run.stdout, nonce);
  if (data === null)
    return { kind: "no-result", reason: noResultReason(run, timeoutMs), timedOut: run.timedOut };
  const common = CommonSchema.safeParse(data);
  const fallback = FallbackSchema.safeParse(data);
  if (fallback.success && common.success)
    return { kind: "fallback", fallback: { ...fallback.data, ...common.data } };
  const failure = FailureSchema.safeParse(data);
  if (failure.success && common.success)
    return { kind: "failed", failure: { ...failure.data, ...common.data } };
  const parsed = (mode === "trace" ? TraceOkSchema : TrialSchema).safeParse(data);
  if (!parsed.success || !common.success) {
    const issue = (parsed.error ?? common.error)?.issues[0];
    return {
      kind: "no-result",
      reason: `printed a result this gpuprep does not read (at ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"})`,
      timedOut: false,
    };
  }
  return { kind: "ok", result: { ...parsed.data, ...common.data } };
}

/** Failures of the user's input (config, factory, options) as the one-line error the CLI prints. */
export function failureAsUserError(failure: PayloadFailure, where: string): UserError {
  // The hints live in src/probe/payload-errors.json, the table memory.py reads too.
  const hint = payloadErrorKinds()[failure.errorKind ?? ""]?.hint ?? `the Python was ${where}`;
  return new UserError(`memory: ${failure.error}`, hint);
}

const PidSchema = z.looseObject({ status: z.literal("ok"), pid: z.number(), usedBytes: z.number() });

/** A running process's GPU memory as nvidia-smi shows it there (seed 001's rule, --pid). */
export async function runPidMemory(transport: Transport, pid: number, timeoutMs = 60_000): Promise<number> {
  const channel = frameChannel(transport);
  const run = await transport.runPython(
    pythonBootstrap(channel.header + payloadSource()),
    [JSON.stringify({ mode: "pid", pid })],
    timeoutMs,
    channel.runOptions,
  );
  const data = findFrame(run.stdout, channel.nonce);
  const ok = PidSchema.safeParse(data);
  if (ok.success) return ok.data.usedBytes;
  const failed = FailureSchema.safeParse(data);
  throw new UserError(
    `memory: --pid ${pid}: ${failed.success ? failed.data.error : noResultReason(run, timeoutMs)}`,
    "give a PID that nvidia-smi lists as a compute app, or --current-memory GiB",
  );
}
