/**
 * The JSON document validate.py prints, as a zod schema (the single source of the TS types), and
 * running it with a local interpreter. Benchmark figures are optional everywhere: any of them
 * may be missing because that benchmark failed, was skipped or crashed half-way.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { UserError, errorMessage } from "../errors.js";
import { pythonBootstrap } from "../transports/node-frame.js";
import { frameChannel, readFrame, scriptChannel } from "../transports/payload-frame.js";
import { localTransport } from "../transports/local.js";
import type { Transport } from "../transports/types.js";
import { importChecks } from "../kb/import-checks.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { formatsByCapability } from "./peaks.js";

const PAYLOAD_SCHEMA_ID = "gpuprep.validate.payload";
const PAYLOAD_SCHEMA_VERSION = 1;

const num = z.number().nullable().optional();
const str = z.string().nullable().optional();

const ChildRunSchema = z.object({
  status: z.enum(["ok", "error", "crash", "timeout"]),
  durationMs: z.number(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  error: z.string().nullable(),
  stderrTail: z.string().nullable(),
});

const TimingSchema = z.looseObject({
  medianMs: z.number(),
  minMs: z.number(),
  maxMs: z.number(),
  reps: z.number(),
  iqrPct: num,
});

const EnvSchema = z.looseObject({
  torch: z.object({ version: z.string(), file: z.string(), cuda: str }),
  cudaAvailable: z.boolean(),
  cudaInitError: str,
  deviceCount: z.number(),
  devices: z.array(
    z.looseObject({
      index: z.number(),
      name: z.string(),
      capability: z.tuple([z.number(), z.number()]),
      totalMemoryBytes: z.number(),
    }),
  ),
  archList: z.array(z.string()),
  cudnnVersion: num,
  ncclVersion: str,
  sdpaApi: z.string(),
  tf32: z.object({
    matmul: z.boolean().nullable(),
    cudnn: z.boolean().nullable(),
    float32MatmulPrecision: str,
  }),
  kernel: z.object({ ran: z.boolean(), ok: z.boolean(), relError: num, error: str }).nullable(),
  numpy: z.object({ version: str, roundTrip: z.boolean().nullable(), error: str }),
  warnings: z.array(z.string()),
});

const ModelSchema = z.looseObject({
  path: z.string(),
  kind: z.string(),
  files: z.array(z.string()),
  tensors: z.number(),
  parameters: z.number(),
  dtypes: z.record(z.string(), z.number()),
  nonFinite: z.array(z.string()),
  loadSeconds: z.number(),
  config: z.object({ modelType: z.unknown(), architectures: z.unknown() }).nullable(),
});

const MatmulCaseSchema = TimingSchema.partial().extend({
  dtype: z.string(),
  m: z.number(),
  n: z.number(),
  k: z.number(),
  tflops: num,
  relError: num,
  ok: z.boolean().optional(),
  error: str,
});

const BackendRunSchema = TimingSchema.partial().extend({
  available: z.boolean().optional(),
  reason: str,
  speedup: num,
  tflops: num,
  relError: num,
  ok: z.boolean().optional(),
  error: str,
});

const SdpaCaseSchema = z.looseObject({
  dtype: z.string(),
  batch: z.number(),
  heads: z.number(),
  seq: z.number(),
  headDim: z.number(),
  flops: z.number(),
  error: str,
  manual: BackendRunSchema.optional(),
  default: BackendRunSchema.optional(),
  backends: z.record(z.string(), BackendRunSchema),
});

const BandwidthSchema = TimingSchema.partial().extend({ gbps: num, error: str });

const BenchResultSchema = z.looseObject({
  name: z.string(),
  skipped: str,
  error: str,
  seconds: num,
  data: z.unknown().optional(),
});

export const SdpaDataSchema = z.looseObject({ api: z.string(), cases: z.array(SdpaCaseSchema), error: str });
export const MatmulDataSchema = z.looseObject({ cases: z.array(MatmulCaseSchema) });
export const MembwDataSchema = BandwidthSchema.extend({ bytes: z.number(), ok: z.boolean() });
export const TransferDataSchema = z.looseObject({
  bytes: z.number(),
  pinned: z.boolean().optional(),
  h2d: BandwidthSchema.optional(),
  d2h: BandwidthSchema.optional(),
  ok: z.boolean().optional(),
  error: str,
});
export const NcclDataSchema = z.looseObject({
  worldSize: z.number(),
  skipped: str,
  backend: str,
  sizes: z
    .array(z.object({ bytes: z.number(), medianMs: z.number(), algbwGBs: z.number(), busbwGBs: z.number() }))
    .optional(),
});

/** One op's kernels as torch.profiler saw them (the CPU test mode: aten operators). */
const KernelListSchema = z.object({
  kernels: z.array(z.object({ name: z.string(), count: z.number(), us: z.number() })).optional(),
  distinct: num,
  error: str,
});

const KernelOpSchema = KernelListSchema.extend({
  op: z.enum(["matmul", "sdpa", "feature"]),
  dtype: str,
  n: num,
  shape: z.array(z.number()).optional(),
  mask: str,
  backend: str,
  feature: str,
});

export const KernelsDataSchema = z.looseObject({
  ops: z.array(KernelOpSchema),
  preferredBlas: str,
  profiler: str,
});

const FeatureCellSchema = TimingSchema.partial().extend({
  feature: z.string(),
  format: z.string(),
  /** The knowledge base says this compute capability has no such format: not called. */
  notOnArch: z.boolean().optional(),
  available: z.boolean().optional(),
  reason: str,
  m: num,
  n: num,
  k: num,
  tflops: num,
  relError: num,
  ok: z.boolean().optional(),
  error: str,
});

export const FeaturesDataSchema = z.looseObject({
  capability: z.array(z.number()).nullable(),
  formatsFromKb: z.boolean(),
  cells: z.array(FeatureCellSchema),
});

const JitSmokeSchema = z.object({
  name: z.string(),
  what: z.string(),
  ok: z.boolean(),
  error: str,
  firstCallMs: num,
  secondCallMs: num,
  libraries: z.array(z.string()).optional(),
});

const JitRunSchema = z.object({
  run: ChildRunSchema,
  env: z.record(z.string(), z.string()),
  smokes: z.array(JitSmokeSchema),
});

const JitSchema = z.object({ normal: JitRunSchema, noJit: JitRunSchema });

const MfuResultSchema = z.looseObject({
  error: str,
  kind: str,
  path: z.string().optional(),
  modelType: str,
  modelClass: str,
  attnImplementation: str,
  parameters: num,
  matmulWeights: num,
  layers: num,
  heads: num,
  headDim: num,
  seqLen: num,
  batch: num,
  tokensPerStep: num,
  flopsPerToken: num,
  steps: num,
  medianStepMs: num,
  tokensPerSecond: num,
  achievedTflops: num,
  lossFinite: z.boolean().optional(),
  peakMemoryBytes: num,
  kernels: KernelListSchema.optional(),
});

const MfuSchema = z.object({
  run: ChildRunSchema.nullable(),
  result: MfuResultSchema.nullable(),
  skipped: str,
});

const SmiGpuSchema = z.looseObject({
  index: z.number().nullable(),
  name: z.string(),
  pcie_link_gen_current: num,
  pcie_link_gen_max: num,
  pcie_link_width_current: num,
  pcie_link_width_max: num,
  driver_version: str,
});

export const PayloadSchema = z.object({
  schema: z.literal(PAYLOAD_SCHEMA_ID),
  schemaVersion: z.literal(PAYLOAD_SCHEMA_VERSION),
  python: z.object({ executable: z.string(), version: z.string() }),
  options: z.record(z.string(), z.unknown()),
  nvidiaSmi: z.object({
    status: z.enum(["ok", "not-found", "failed"]),
    error: str,
    gpus: z.array(SmiGpuSchema),
  }),
  env: z.object({ run: ChildRunSchema, result: EnvSchema.nullable() }),
  extensions: z
    .array(
      z.object({
        module: z.string(),
        installed: z.boolean(),
        run: ChildRunSchema.nullable(),
        result: z.object({ version: str }).nullable(),
      }),
    )
    .nullable(),
  /** Where it ran (NGC image variables, machine); absent in payloads from before issue 27. */
  host: z.object({ machine: z.string(), env: z.record(z.string(), z.string()) }).optional(),
  model: z.object({ run: ChildRunSchema, result: ModelSchema.nullable() }).nullable(),
  benchmarks: z.object({
    run: ChildRunSchema.nullable(),
    results: z.array(BenchResultSchema),
    running: str,
    wanted: z.array(z.string()),
  }),
  /** The JIT check (absent before issue 27; null when not selected). */
  jit: JitSchema.nullable().optional(),
  /** The training step built from --model's config (absent before issue 27; null without one). */
  mfu: MfuSchema.nullable().optional(),
  durationMs: z.number(),
});

export type Payload = z.infer<typeof PayloadSchema>;
export type PayloadEnv = z.infer<typeof EnvSchema>;
export type BenchResult = z.infer<typeof BenchResultSchema>;
export type ChildRun = z.infer<typeof ChildRunSchema>;

export type KernelOp = z.infer<typeof KernelOpSchema>;
export type FeatureCellData = z.infer<typeof FeatureCellSchema>;
export type JitSmoke = z.infer<typeof JitSmokeSchema>;
export type MfuResult = z.infer<typeof MfuResultSchema>;

const BENCHMARK_NAMES = ["sdpa", "matmul", "features", "membw", "transfer", "nccl", "kernels"] as const;
const CHECK_NAMES = ["extensions", "model", "jit", "mfu"] as const;
export const ONLY_NAMES = [...BENCHMARK_NAMES, ...CHECK_NAMES, "checks", "benchmarks"] as const;

export interface PayloadOptions {
  quick?: boolean;
  only?: string[];
  model?: string;
  /** "cpu": every benchmark at toy sizes on the CPU. Only for testing on machines without a GPU. */
  device?: "cuda" | "cpu";
  /** Modules to import-check; payloadArgs() fills in the KB's import-checks table when absent. */
  extensions?: string[];
  timeouts?: Partial<Record<"env" | "bench" | "extension" | "model" | "jit" | "mfu", number>>;
  /** The MFU step's sequence length and batch (defaults: min(2048, the model's context), 8). */
  seqLen?: number;
  batch?: number;
  /** "module:function" smokes of the user's own extensions for the JIT check. */
  jitSmokes?: string[];
  /** Per compute capability, the tensor formats the KB says it has (the feature matrix runs only those). */
  formats?: Record<string, Record<string, boolean>>;
}

/**
 * The payload's command line: its options as JSON, with the extension list from the KB's
 * import-checks table (the one doctor's probe checks) unless the caller named modules.
 */
export function payloadArgs(options: PayloadOptions): string[] {
  const extensions = options.extensions ?? importChecks().map((row) => row.module);
  const formats = options.formats ?? formatsByCapability(loadKnowledgeBase());
  return [JSON.stringify({ ...options, extensions, formats })];
}

/** Parse the payload's stdout (or a saved copy); a clear UserError when it is not one. */
export function parsePayload(data: unknown, origin: string): Payload {
  const parsed = PayloadSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join(".") || "(top level)" : "(unknown)";
    throw new UserError(
      `${origin} is not a validate payload this gpuprep reads (at ${where}: ${issue?.message ?? "invalid"})`,
      "run `gpuprep validate` again with this gpuprep version",
    );
  }
  return parsed.data;
}

const PAYLOAD_PATH = fileURLToPath(new URL("./validate.py", import.meta.url));

/**
 * Runs validate.py with `python` on this machine, through the local transport like every other
 * payload (its text in a temporary file, the frame's nonce on fd 3), and parses its frame. The
 * payload keeps its own per-section time limits; this outer limit only catches an interpreter that
 * hangs before it starts.
 */
export async function runPayload(
  python: string,
  options: PayloadOptions,
  timeoutMs = 1_500_000,
): Promise<Payload> {
  try {
    return await runPayloadThrough(localTransport(python), options, timeoutMs);
  } catch (error) {
    if (error instanceof UserError && /no such interpreter/.test(error.message))
      throw new UserError(`Python interpreter "${python}" was not found`, "pass one with --python PATH");
    if (error instanceof UserError) throw error;
    throw new UserError(`could not start "${python}": ${errorMessage(error)}`, null);
  }
}

/**
 * The payload's frame (transports/payload-frame.ts: the first line with this run's nonce) as a
 * Payload, or a one-line UserError saying what came instead.
 */
export function payloadFromOutput(
  run: { stdout: string; stderr: string; code: number | null; signal: string | null },
  who: string,
  nonce: string,
): Payload {
  const data = readFrame(run.stdout, nonce, "validate");
  if (data === null) {
    const why = run.signal
      ? `was killed by ${run.signal}`
      : `exited with code ${String(run.code)} and printed no result`;
    const detail = run.stderr.trim().split("\n").slice(-1)[0] ?? "";
    throw new UserError(
      `the validate payload run by ${who} ${why}${detail ? `: ${detail.slice(0, 300)}` : ""}`,
      "the payload needs Python >= 3.8; check the interpreter with `--python PATH`",
    );
  }
  return parsePayload(data, `the output of ${who}`);
}

let payloadSource: string | null = null;
/**
 * validate.py's text, for transports that carry it to another machine (it is not installed
 * there); with `nonce`, headed by the frame channel that carries it in the text (fleet).
 */
export function payloadScript(nonce?: string): string {
  payloadSource ??= readFileSync(PAYLOAD_PATH, "utf8");
  return nonce === undefined ? payloadSource : scriptChannel(nonce).header + payloadSource;
}

/**
 * The payload through any Transport (docker, ssh, this machine): its source travels in a
 * `python -` bootstrap that writes it to a temporary file, since validate.py re-runs itself
 * through __file__.
 */
export async function runPayloadThrough(
  transport: Transport,
  options: PayloadOptions,
  timeoutMs = 1_500_000,
): Promise<Payload> {
  const channel = frameChannel(transport);
  const result = await transport.runPython(
    pythonBootstrap(channel.header + payloadScript()),
    payloadArgs(options),
    timeoutMs,
    channel.runOptions,
  );
  return payloadFromOutput(result, transport.describe(), channel.nonce);
}
