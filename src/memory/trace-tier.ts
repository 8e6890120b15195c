/**
 * The trace tier's figure as a MemoryEstimate. memory.py traces one step on fake tensors, keeps the
 * order of every allocation and free, and replays the weights, three steps and the eval step of a
 * real trial through a model of torch's caching allocator (block rounding, 2 MiB and 20 MiB
 * segments, best-fit reuse with splitting, expandable_segments). The device then holds that model's
 * peak reserve, a safety share of it for transient kernel workspaces, and the CUDA context (by GPU
 * and torch version): on the 13 fit cells of docs/reports/memory-fit-h100.jsonl the allocator model
 * replayed on real allocations matched the real peak reserved within 0.52 %.
 */
import { cudaContextFor, defaultCalibration, type Calibration, type CudaContext } from "./calibration.js";
import { docsUrl } from "../docs-url.js";
import type { TraceResult } from "./payload.js";
import type { MemoryEstimate } from "./types.js";

const TRACE_ACCURACY = {
  medianAbsErrorPct: 0.13,
  p95AbsErrorPct: 2.14,
  source: `peak allocated on 18 held-out cells on an H100 (torch 2.11), ${docsUrl("docs/reports/memory-retrace-h100.jsonl")}`,
};

/** torch versions the trace tier runs on: memory.py needs torch.distributed._tools.mem_tracker. */
export const TRACE_TORCH_NEEDED = "torch >= 2.5";

/** The CUDA context for a traced result: its GPU and torch, or the GPU the verdict is for. */
export function contextForTrace(
  result: Pick<TraceResult, "torch" | "gpu">,
  targetGpu: string | null,
  calibration: Calibration = defaultCalibration(),
): CudaContext {
  return cudaContextFor(result.gpu?.name ?? targetGpu, result.torch.version, calibration);
}

export function traceEstimate(
  result: TraceResult,
  targetGpu: string | null = null,
  calibration: Calibration = defaultCalibration(),
): MemoryEstimate {
  const b = result.breakdown;
  const notes = [...result.notes];
  const simulated = result.allocator ?? null;
  // The allocator model counts blocks as the allocator does (rounded, unsplit rests): the larger of
  // its peak and the tracker's is the step's allocated peak.
  const peakAllocatedBytes = Math.max(result.peakAllocatedBytes, simulated?.peakAllocatedBytes ?? 0);
  const reserved = simulated
    ? Math.max(simulated.peakReservedBytes, peakAllocatedBytes)
    : Math.ceil(peakAllocatedBytes * 1.25);
  const convShare = simulated?.stepAllocatedBytes
    ? Math.min(1, (simulated.convolutionBytes ?? 0) / simulated.stepAllocatedBytes)
    : 0;
  const safety = Math.ceil(
    reserved *
      (calibration.allocatorSafetyFraction.value +
        calibration.convolutionWorkspaceFraction.value * convShare),
  );
  const context = contextForTrace(result, targetGpu, calibration);
  if (simulated) {
    notes.push(
      `caching allocator modelled on ${simulated.events} traced allocations: ${mib(simulated.peakReservedBytes)} reserved at the peak${simulated.expandableSegments ? " (expandable_segments)" : ""}, + ${mib(safety)} for transient kernel workspaces${convShare > 0.01 ? ` (convolutions read ${Math.round(convShare * 100)} % of the step's allocations: cuDNN workspaces)` : ""}`,
    );
    if (simulated.outOfMemory) notes.push("the allocator model ran out of the card's memory: does not fit");
  } else {
    notes.push("this memory.py sent no allocation order: the reserve is taken as 25 % of the peak");
  }
  notes.push(`CUDA context ${mib(context.bytes)} (${context.basis})`);
  if (result.traceDevice === "cpu") notes.push("accuracy not measured for traces on CPU kernels");
  const allocatorOverhead = reserved - peakAllocatedBytes + safety;
  return {
    tier: "trace",
    batch: result.batch,
    peakAllocatedBytes,
    totalBytes: peakAllocatedBytes + allocatorOverhead + context.bytes,
    breakdown: {
      parameters: b.parameters,
      gradients: b.gradients,
      optimizerState: b.optimizerState,
      activations: b.activations,
      // The tracker's parts may fall short of the peak by its own rounding; keep the sum equal to it.
      temporaries:
        b.temporaries +
        (peakAllocatedBytes -
          (b.parameters + b.gradients + b.optimizerState + b.activations + b.temporaries)),
      cudaContext: context.bytes,
      allocatorOverhead,
    },
    parameterCount: result.parameterCount,
    trainableParameterCount: result.trainableParameterCount,
    accuracy: result.traceDevice === "cuda" ? TRACE_ACCURACY : null,
    notes,
  };
}

function mib(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}
