/**
 * `gpuprep memory`: will this training step fit on this GPU, and the largest batch that does:
 * estimated by tracing one step on fake tensors in the target Python, measured with real steps
 * on the GPU (--measure), or scaled from a batch that already ran (seed 001's rule).
 * Exit 0: fits; 1: does not fit even at the smallest batch; 2: could not run.
 */
import { UserError } from "../errors.js";
import { readFactsFile, writeFactsFile } from "../facts/io.js";
import type { Facts } from "../facts/schema.js";
import { chooseTransport, gatherFacts } from "../gather/index.js";
import { budgetFor, formulaTier, targetMemory } from "../memory/formula-bridge.js";
import { verdictFor } from "../memory/budget.js";
import { scaledRule as seedRule } from "../memory/scaled-rule.js";
import { renderMemoryHtml } from "../report/memory-html.js";
import {
  failureAsUserError,
  runMemoryPayload,
  runPidMemory,
  type MemoryRequest,
  type TraceResult,
  type TrialResult,
} from "../memory/payload.js";
import { payloadErrorKinds } from "../transports/payload-frame.js";
import { MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION, type MemoryReport } from "../memory/report-types.js";
import { measuredSearch, type TrialOutcome } from "../memory/search.js";
import { traceMaxBatch } from "../memory/trace-search.js";
import { CUDA_CONTEXT_BYTES, TRACE_TORCH_NEEDED, traceEstimate } from "../memory/trace-tier.js";
import type { MemoryEstimate, ModelSource } from "../memory/types.js";
import { renderJsonDocument } from "../report/envelope.js";
import { renderMemoryText } from "../report/memory-text.js";
import { makeStyle, useColor } from "../report/style.js";
import type { Transport } from "../transports/types.js";
import { writeOutputFile } from "../util/write-output.js";
import { onePlace } from "./args.js";
import { writeDocument, writeText } from "../report/terminal.js";
import {
  OPTIONS,
  modelSource,
  oneOf,
  parseBatch,
  positiveInt,
  positiveNumber,
  workSpec,
  type Values,
} from "./memory-input.js";
import { EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, defineCommand } from "./command.js";

const GIB = 1024 ** 3;

export const memoryCommand = defineCommand({
  name: "memory",
  title: "will this training step fit on the GPU, and the largest batch that does",
  usage: [["(--model DIR|config.json|NAME | --factory module:function) [flags]"]],
  options: OPTIONS,
  outputs: ["html", "save"],
  outro: `The trace tier needs ${TRACE_TORCH_NEEDED} in the target Python (torch.distributed._tools.mem_tracker);
without a CUDA build it traces CPU kernels, whose figures lean high.
exit: 0 fits, 1 does not fit even at the smallest batch (the report says how much is missing),
2 could not run`,
  examples: [
    [
      'gpuprep memory --model ./config.json --target "H100 SXM"',
      "the largest batch that fits, for a GPU you name",
    ],
    [
      "gpuprep memory --model ./config.json --task finetune-lora --amp bf16 --seq-len 2048",
      "a LoRA fine-tune on this machine's GPU",
    ],
    [
      "gpuprep memory --factory train:build_model --batch 32 --measure",
      "your own model, also measured on the real GPU",
    ],
  ],
  async run({ values }) {
    onePlace("memory", values, ["container", "image", "ssh"], "name one place");
    // --from and --save as in doctor and init: a snapshot instead of gathering, or what was gathered.
    if (values.from !== undefined && values.target !== undefined)
      throw new UserError("memory: --from and --target cannot be combined", "name one machine");
    if (values.save !== undefined && (values.from !== undefined || values.target !== undefined))
      throw new UserError(
        "memory: --save writes the facts gathered here; with --from or --target nothing is gathered",
        "drop --save, or drop --from/--target",
      );
    const work = workSpec(values);
    const batch = parseBatch(values.batch);
    const tier = oneOf("tier", values.tier, ["trace", "formula", "auto"] as const, "auto");
    const margin = values.margin === undefined ? 0.05 : Number(values.margin);
    if (!(margin >= 0 && margin < 1))
      throw new UserError(
        `memory: --margin ${values.margin} is not a fraction in [0, 1)`,
        "e.g. --margin 0.05",
      );
    const timeoutS = positiveNumber("timeout", values.timeout);
    const currentBatch = positiveInt("current-batch", values["current-batch"]);
    const currentGiB = positiveNumber("current-memory", values["current-memory"]);
    const pid = positiveInt("pid", values.pid);
    if (
      (currentGiB !== null || pid !== null) !== (currentBatch !== null) ||
      (currentGiB !== null && pid !== null)
    ) {
      throw new UserError(
        "memory: seed 001's rule needs --current-batch N and one of --current-memory GiB or --pid PID",
        "e.g. --current-batch 8 --current-memory 30",
      );
    }
    const trialDevice = oneOf("trial-device", values["trial-device"], ["cuda", "cpu"] as const, "cuda");
    const source = modelSource(values);
    const transport = chooseTransport({
      python: values.python,
      container: values.container,
      image: values.image,
      ssh: values.ssh,
    });

    const facts = await machineFacts(values);
    const target = values.target !== undefined ? targetMemory(values.target) : null;
    const device = budgetFor(facts, target, margin);
    const notes: string[] = [];
    const base = { ...work, source };

    // Estimate: the trace tier in the target Python, else the formula tier.
    const estimates: MemoryEstimate[] = [];
    let maxBatch: number | null = null;
    let parameterCount = 0;
    if (tier !== "formula") {
      const traceAt = async (b: number): Promise<MemoryEstimate> => {
        const result = await traceOnce(
          transport,
          { ...base, mode: "trace", batch: b },
          (timeoutS ?? 600) * 1000,
        );
        if (result === "unsupported") throw new TraceUnsupported();
        return traceEstimate(result, CUDA_CONTEXT_BYTES);
      };
      try {
        if (batch.range && device.usableBytes > 0) {
          const found = await traceMaxBatch(traceAt, device.usableBytes, batch.min, batch.max);
          estimates.push(...found.estimates);
          maxBatch = found.maxBatch;
        } else {
          estimates.push(await traceAt(batch.min));
        }
      } catch (error) {
        if (!(error instanceof TraceUnsupported)) throw error;
        if (tier === "trace") {
          throw new UserError(
            `memory: the trace tier needs ${TRACE_TORCH_NEEDED} in ${transport.describe()}: ${error.detail}`,
            "pass --python PATH to a newer torch, or --tier formula",
          );
        }
        notes.push(`trace tier not available: ${error.detail}`);
      }
    }
    if (estimates.length === 0 && !values.measure && currentBatch === null) {
      // --measure and seed 001's rule need no estimate; without them there is nothing to report.
      const formula = source.kind === "factory" ? null : formulaTier(source.path, work, batch.min);
      if (formula === null) {
        throw new UserError(
          `memory: no estimate: the trace tier needs ${TRACE_TORCH_NEEDED} in the target Python, and the formula tier ${source.kind === "factory" ? "needs a config.json, not a factory" : "is not in this build"}`,
          "pass --python PATH to an environment with torch >= 2.5",
        );
      }
      estimates.push(formula);
    }
    parameterCount = estimates[0]?.parameterCount ?? 0;

    // Measured: real steps on the GPU, each trial a fresh process.
    let trials: MemoryReport["trials"] = [];
    let measuredMaxBatch: number | null = null;
    let bestThroughputBatch: number | null = null;
    if (values.measure) {
      const trialTimeout = (timeoutS ?? 300) * 1000;
      const runTrial = (b: number, steps: number) =>
        trialOnce(transport, { ...base, mode: "trial", batch: b, steps, device: trialDevice }, trialTimeout);
      const total = device.totalBytes > 0 ? device.totalBytes : Number.MAX_SAFE_INTEGER;
      const search = await measuredSearch(runTrial, {
        batchMin: batch.min,
        batchMax: batch.max,
        totalBytes: total,
        marginFraction: margin,
        contextBytes: CUDA_CONTEXT_BYTES,
        steps: 3,
        confirmSteps: 20,
      });
      trials = search.trials.map(
        ({ batch: b, status, peakAllocatedBytes, peakReservedBytes, stepMs, error }) => ({
          batch: b,
          status,
          peakAllocatedBytes,
          peakReservedBytes,
          stepMs,
          error,
        }),
      );
      measuredMaxBatch = search.maxBatch;
      const confirm = search.trials.find(
        (t) => t.purpose === "confirm" && t.passed && t.batch === search.maxBatch,
      );
      if (confirm) estimates.unshift(measuredEstimate(confirm, parameterCount));
      bestThroughputBatch = search.bestThroughputBatch;
      notes.push(...search.notes);
    }

    // Seed 001's rule.
    let scaledRule: MemoryReport["scaledRule"] = null;
    if (currentBatch !== null && device.totalBytes > 0) {
      const currentBytes =
        pid !== null ? await runPidMemory(transport, pid) : Math.round((currentGiB as number) * GIB);
      const rule = seedRule({ currentBatch, currentBytes, totalBytes: device.totalBytes });
      scaledRule = {
        currentBatch,
        currentBytes,
        currentSource: pid !== null ? `nvidia-smi, pid ${pid}` : "--current-memory",
        ...rule,
        offFromMeasuredPct: measuredMaxBatch
          ? Math.round(((rule.maxBatch - measuredMaxBatch) / measuredMaxBatch) * 1000) / 10
          : null,
      };
    }

    if (estimates.length === 0 && scaledRule !== null)
      estimates.push(scaledEstimate(scaledRule, parameterCount));
    if (estimates.length === 0) {
      // --measure without an estimate, and not even the smallest batch passed.
      const first = trials[0];
      throw new UserError(
        `memory: no batch passed on the GPU and no estimate was possible${first?.error ? ` (batch ${first.batch}: ${first.error})` : ""}`,
        `the trace tier needs ${TRACE_TORCH_NEEDED} in the target Python`,
      );
    }
    const measured = estimates.find((e) => e.tier === "measured");
    const shown = measured ?? pickShown(estimates, maxBatch, batch.range);
    const shownMax = measured
      ? measuredMaxBatch
      : shown.tier === "scaled-rule"
        ? (scaledRule?.maxBatch ?? null)
        : maxBatch;
    const verdict = verdictFor(
      shown,
      device,
      batch.range ? shownMax : shown.totalBytes <= device.usableBytes ? shown.batch : null,
    );
    const report: MemoryReport = {
      model: { source: stripData(source), name: modelName(source), parameterCount },
      work,
      device,
      estimates,
      verdict,
      trials,
      measuredMaxBatch,
      bestThroughputBatch,
      scaledRule,
      notes,
    };
    if (values.html !== undefined) {
      writeOutputFile(values.html, renderMemoryHtml(report), "--html");
    }
    if (values.json) writeDocument(renderJsonDocument(MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION, report));
    else writeText(renderMemoryText(report, makeStyle(useColor())));
    if (device.totalBytes === 0) return EXIT_TOOL_ERROR;
    if (values.measure && measuredMaxBatch === null) return EXIT_FINDINGS;
    return verdict.fits ? EXIT_OK : EXIT_FINDINGS;
  },
});

/** The confirmed trial as an estimate (tier "measured"): what the allocator and the device really held. */
function measuredEstimate(trial: TrialOutcome, parameterCount: number): MemoryEstimate {
  const allocated = trial.peakAllocatedBytes ?? 0;
  const reserved = trial.peakReservedBytes ?? allocated;
  const context = trial.processUsedBytes
    ? Math.max(0, trial.processUsedBytes - reserved)
    : CUDA_CONTEXT_BYTES;
  return {
    tier: "measured",
    batch: trial.batch,
    peakAllocatedBytes: allocated,
    totalBytes: reserved + context,
    // Real steps show the peak, not who held it: all of it is listed as activations.
    breakdown: {
      parameters: 0,
      gradients: 0,
      optimizerState: 0,
      activations: allocated,
      temporaries: 0,
      cudaContext: context,
      allocatorOverhead: reserved - allocated,
    },
    parameterCount,
    trainableParameterCount: 0,
    accuracy: null,
    notes: ["measured: the peak of real steps, not split by what held it"],
  };
}

/** Seed 001's rule as the only estimate: the batch that ran, at the memory it used. */
function scaledEstimate(
  rule: NonNullable<MemoryReport["scaledRule"]>,
  parameterCount: number,
): MemoryEstimate {
  return {
    tier: "scaled-rule",
    batch: rule.currentBatch,
    peakAllocatedBytes: rule.currentBytes,
    totalBytes: rule.currentBytes,
    breakdown: {
      parameters: 0,
      gradients: 0,
      optimizerState: 0,
      activations: rule.currentBytes,
      temporaries: 0,
      cudaContext: 0,
      allocatorOverhead: 0,
    },
    parameterCount,
    trainableParameterCount: 0,
    accuracy: null,
    notes: [`the memory batch ${rule.currentBatch} used (${rule.currentSource}), not split by what held it`],
  };
}

/** The estimate the verdict is about: the largest batch that fits, else the smallest traced. */
function pickShown(estimates: MemoryEstimate[], maxBatch: number | null, range: boolean): MemoryEstimate {
  if (range && maxBatch !== null)
    return estimates.find((e) => e.batch === maxBatch) ?? (estimates[0] as MemoryEstimate);
  return estimates[0] as MemoryEstimate;
}

function stripData(source: ModelSource & { data?: unknown }): ModelSource {
  const { data: _data, ...rest } = source;
  return rest as ModelSource;
}

function modelName(source: ModelSource): string {
  if (source.kind === "factory") return source.spec;
  if (source.kind === "hf-cache") return source.name;
  return source.path;
}

class TraceUnsupported extends Error {
  constructor(readonly detail = "") {
    super(detail);
  }
}

async function traceOnce(
  transport: Transport,
  request: MemoryRequest,
  timeoutMs: number,
): Promise<TraceResult | "unsupported"> {
  const outcome = await runMemoryPayload(transport, request, timeoutMs);
  if (outcome.kind === "ok") return outcome.result as TraceResult;
  if (outcome.kind === "no-result") {
    throw new UserError(
      `memory: tracing batch ${request.batch} in ${transport.describe()} ${outcome.reason}`,
      outcome.timedOut ? "give it more time with --timeout SECONDS" : "the payload needs Python >= 3.8",
    );
  }
  const failure = outcome.failure;
  if (failure.status === "unsupported" || failure.errorKind === "no-torch")
    throw new TraceUnsupported(failure.error);
  throw failureAsUserError(failure, transport.describe());
}

/** One trial; batch-dependent failures (OOM, a hang, a crash) are results, input errors stop the search. */
async function trialOnce(
  transport: Transport,
  request: MemoryRequest,
  timeoutMs: number,
): Promise<TrialOutcome> {
  const outcome = await runMemoryPayload(transport, request, timeoutMs);
  const empty = { batch: request.batch, peakAllocatedBytes: null, peakReservedBytes: null, stepMs: null };
  if (outcome.kind === "no-result") {
    return { ...empty, status: outcome.timedOut ? "timeout" : "error", error: outcome.reason };
  }
  if (outcome.kind === "failed") {
    // Input errors stop the search (src/probe/payload-errors.json, the table memory.py reads too).
    if (payloadErrorKinds()[outcome.failure.errorKind ?? ""]?.input === true) {
      throw failureAsUserError(outcome.failure, transport.describe());
    }
    return { ...empty, status: "error", error: outcome.failure.error };
  }
  const r = outcome.result as TrialResult;
  return {
    batch: r.batch,
    status: r.status,
    peakAllocatedBytes: r.peakAllocatedBytes ?? null,
    peakReservedBytes: r.peakReservedBytes ?? null,
    stepMs: r.stepMs ?? null,
    error: r.error,
    processUsedBytes: r.processUsedBytes ?? null,
  };
}

async function machineFacts(values: Values): Promise<Facts | null> {
  if (values.target !== undefined) return null;
  if (values.from !== undefined) return readFactsFile(values.from);
  const facts = await gatherFacts({
    python: values.python,
    container: values.container,
    image: values.image,
    ssh: values.ssh,
    projectDir: null,
    fast: true,
  });
  if (values.save !== undefined) writeFactsFile(values.save, facts);
  return facts;
}
