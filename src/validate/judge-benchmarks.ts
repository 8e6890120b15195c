/** The benchmarks, each figure held against the GPU's own peak (or the PCIe link's rate). */
import { z } from "zod";
import {
  MatmulDataSchema,
  MembwDataSchema,
  NcclDataSchema,
  SdpaDataSchema,
  TransferDataSchema,
  type BenchResult,
  type Payload,
} from "./payload.js";
import type { GpuPeak } from "./peaks.js";
import type { Status, ValidationItem } from "./report.js";
import {
  MATMUL_LIMITS,
  MEMBW_LIMITS,
  PCIE_LANE_GBS,
  TRANSFER_LIMITS,
  judgeRatio,
  sdpaMinSpeedup,
} from "./thresholds.js";
import { describeRun } from "./judge-checks.js";
import { judgeFeatures } from "./judge-features.js";

interface BenchContext {
  peak: GpuPeak | null;
  ccMajor: number | null;
}

function item(
  id: string,
  category: string,
  title: string,
  status: Status,
  reason: string,
  extra: Partial<ValidationItem> = {},
): ValidationItem {
  return { id: `bench.${id}`, group: "benchmark", category, title, status, reason, ...extra };
}

const TITLES: Record<string, string> = {
  sdpa: "SDPA backends vs manual attention",
  matmul: "matmul TFLOP/s",
  membw: "device memory bandwidth",
  transfer: "pinned host <-> device bandwidth",
  nccl: "NCCL all-reduce bus bandwidth",
  features: "feature matrix (fp8, int8, mxfp8, nvfp4 GEMMs)",
  kernels: "kernel provenance (torch.profiler)",
};

export function judgeBenchmarks(payload: Payload, context: BenchContext): ValidationItem[] {
  const items: ValidationItem[] = [];
  const bench = payload.benchmarks;
  for (const result of bench.results) items.push(...judgeOne(result, payload, context));
  // Benchmarks that never reported: the child crashed or timed out before or while running them.
  const reported = new Set(bench.results.map((r) => r.name));
  for (const name of bench.wanted.filter((n) => !reported.has(n))) {
    const how = bench.run ? describeRun(bench.run) : "it did not start";
    const why =
      name === bench.running
        ? `the benchmark process died while running it: ${how}`
        : `not run: the benchmark process ended first (${how})`;
    items.push(item(name, name, TITLES[name] ?? name, "fail", why));
  }
  return items;
}

function judgeOne(result: BenchResult, payload: Payload, context: BenchContext): ValidationItem[] {
  const title = TITLES[result.name] ?? result.name;
  if (result.skipped) return [item(result.name, result.name, title, "skip", result.skipped)];
  // The kernel capture only names kernels: a profiler that cannot run is reported, not a failure.
  const failed: Status = result.name === "kernels" ? "info" : "fail";
  if (result.error) return [item(result.name, result.name, title, failed, `raised ${result.error}`)];
  switch (result.name) {
    case "matmul":
      return judgeMatmul(MatmulDataSchema.parse(result.data), context);
    case "membw":
      return [judgeMembw(MembwDataSchema.parse(result.data), context)];
    case "transfer":
      return judgeTransfer(TransferDataSchema.parse(result.data), payload);
    case "sdpa":
      return judgeSdpa(SdpaDataSchema.parse(result.data), context);
    case "nccl":
      return [judgeNccl(NcclDataSchema.parse(result.data))];
    case "features":
      return judgeFeatures(payload, context.peak);
    default:
      return [];
  }
}

const PEAK_KEY: Record<string, keyof GpuPeak["tflops"]> = {
  bfloat16: "bf16",
  float16: "fp16",
  tf32: "tf32",
  float32: "fp32",
};

function judgeMatmul(data: z.infer<typeof MatmulDataSchema>, context: BenchContext): ValidationItem[] {
  const largest = new Map<string, number>();
  for (const c of data.cases) largest.set(c.dtype, Math.max(largest.get(c.dtype) ?? 0, c.n));
  return data.cases.map((c) => {
    const id = `matmul.${c.dtype}.${c.n}`;
    const title = `${c.dtype} matmul ${c.m}x${c.n}x${c.k}`;
    if (c.error || c.tflops === null || c.tflops === undefined) {
      return item(id, "matmul", title, "fail", `raised ${c.error ?? "no timing"}`);
    }
    const measured = { value: c.tflops, unit: "TFLOP/s" };
    const timing = `median ${c.medianMs?.toFixed(3)} ms of ${c.reps} runs`;
    if (c.ok === false) {
      return item(id, "matmul", title, "fail", `wrong result: rel. error ${c.relError} vs float64`, {
        measured,
      });
    }
    const key = PEAK_KEY[c.dtype];
    const peak = key && context.peak ? context.peak.tflops[key] : null;
    if (!peak || !context.peak) {
      return item(
        id,
        "matmul",
        title,
        "info",
        `${c.tflops.toFixed(1)} TFLOP/s (${timing}); no ${c.dtype} peak known for this GPU`,
        { measured },
      );
    }
    const ratio = c.tflops / peak;
    const reference = { value: peak, unit: "TFLOP/s", what: `${context.peak.name} dense ${key} peak` };
    const pct = `${(ratio * 100).toFixed(0)}% of the ${peak} TFLOP/s dense peak`;
    // Smaller shapes do not fill the chip: shown against the peak, judged only at the largest size.
    if (c.n !== largest.get(c.dtype)) {
      return item(
        id,
        "matmul",
        title,
        "info",
        `${c.tflops.toFixed(1)} TFLOP/s, ${pct} (${timing}; small shapes are not judged)`,
        { measured, reference, ratio },
      );
    }
    const status = judgeRatio(ratio, MATMUL_LIMITS);
    const advice =
      status === "pass"
        ? ""
        : `; under ${MATMUL_LIMITS.pass * 100}%: check clocks and power (nvidia-smi -q -d CLOCK,PERFORMANCE) and other processes on the GPU`;
    return item(id, "matmul", title, status, `${c.tflops.toFixed(1)} TFLOP/s, ${pct} (${timing})${advice}`, {
      measured,
      reference,
      ratio,
      limits: MATMUL_LIMITS,
    });
  });
}

function judgeMembw(data: z.infer<typeof MembwDataSchema>, context: BenchContext): ValidationItem {
  const title = "device copy bandwidth (read + write)";
  if (!data.gbps) return item("membw", "membw", title, "fail", `raised ${data.error ?? "no timing"}`);
  const measured = { value: data.gbps, unit: "GB/s" };
  const text = `${data.gbps.toFixed(0)} GB/s copying ${(data.bytes / 2 ** 30).toFixed(2)} GiB (median ${data.medianMs?.toFixed(3)} ms of ${data.reps})`;
  if (!data.ok) return item("membw", "membw", title, "fail", `${text}; the copy was wrong`, { measured });
  const peak = context.peak?.memoryBandwidthGBs;
  if (!peak || !context.peak)
    return item("membw", "membw", title, "info", `${text}; no memory bandwidth known for this GPU`, {
      measured,
    });
  const ratio = data.gbps / peak;
  const status = judgeRatio(ratio, MEMBW_LIMITS);
  return item("membw", "membw", title, status, `${text}: ${(ratio * 100).toFixed(0)}% of ${peak} GB/s`, {
    measured,
    reference: { value: peak, unit: "GB/s", what: `${context.peak.name} memory bandwidth` },
    ratio,
    limits: MEMBW_LIMITS,
  });
}

type TransferData = z.infer<typeof TransferDataSchema>;
type NvidiaSmiGpu = Payload["nvidiaSmi"]["gpus"][number];
/** The PCIe link's raw rate per direction, what host transfers are held against. */
type PcieLink = { gbps: number; text: string };

function judgeTransfer(data: TransferData, payload: Payload): ValidationItem[] {
  if (data.error) return [item("transfer", "transfer", TITLES.transfer as string, "fail", data.error)];
  const smi = payload.nvidiaSmi.gpus[0];
  const items: ValidationItem[] = [];
  let link: PcieLink | null = null;
  if (smi && smi.pcie_link_gen_max && smi.pcie_link_width_max) {
    const gen = smi.pcie_link_gen_max;
    const width = smi.pcie_link_width_current ?? smi.pcie_link_width_max;
    const lane = PCIE_LANE_GBS[gen];
    if (lane) link = { gbps: lane * width, text: `PCIe gen${gen} x${width}` };
    items.push(judgePcieWidth(smi, gen, smi.pcie_link_width_max));
  }
  for (const direction of ["h2d", "d2h"] as const) items.push(judgeTransferDirection(data, direction, link));
  return items;
}

/** Whether the link trained at the slot's full width (a narrower one caps every host transfer). */
function judgePcieWidth(smi: NvidiaSmiGpu, gen: number, widthMax: number): ValidationItem {
  const width = smi.pcie_link_width_current ?? widthMax;
  const title = "PCIe link width";
  if (width < widthMax)
    return item(
      "pcie-width",
      "transfer",
      title,
      "warn",
      `the link trained at x${width} of x${widthMax}: host transfers run at ${((width / widthMax) * 100).toFixed(0)}% of what the slot allows; reseat the card or check the slot / riser`,
    );
  const genNow = smi.pcie_link_gen_current;
  const idle =
    genNow && genNow < gen ? ` (gen${genNow} at the moment of the query: links drop speed when idle)` : "";
  return item("pcie-width", "transfer", title, "pass", `x${width} of x${widthMax}, gen${gen} max${idle}`);
}

/** One direction's pinned bandwidth against the link's rate (info where the link is not known). */
function judgeTransferDirection(
  data: TransferData,
  direction: "h2d" | "d2h",
  link: PcieLink | null,
): ValidationItem {
  const r = data[direction];
  const title = direction === "h2d" ? "pinned host-to-device" : "pinned device-to-host";
  const id = `transfer.${direction}`;
  if (!r || !r.gbps) return item(id, "transfer", title, "fail", `raised ${r?.error ?? "no timing"}`);
  const measured = { value: r.gbps, unit: "GB/s" };
  const text = `${r.gbps.toFixed(1)} GB/s for ${(data.bytes / 2 ** 20).toFixed(0)} MiB (median ${r.medianMs?.toFixed(3)} ms)${data.pinned === false ? ", host memory not pinned" : ""}`;
  if (data.ok === false)
    return item(id, "transfer", title, "fail", `${text}; the data came back wrong`, { measured });
  if (!link)
    return item(
      id,
      "transfer",
      title,
      "info",
      `${text}; no PCIe link figures from nvidia-smi to judge against`,
      {
        measured,
      },
    );
  const ratio = r.gbps / link.gbps;
  return item(
    id,
    "transfer",
    title,
    judgeRatio(ratio, TRANSFER_LIMITS),
    `${text}: ${(ratio * 100).toFixed(0)}% of ${link.text} (${link.gbps.toFixed(1)} GB/s per direction)`,
    {
      measured,
      reference: { value: link.gbps, unit: "GB/s", what: `${link.text} raw rate` },
      ratio,
      limits: TRANSFER_LIMITS,
    },
  );
}

const FUSED = ["flash", "cudnn", "efficient"] as const;

type SdpaData = z.infer<typeof SdpaDataSchema>;
type SdpaCase = SdpaData["cases"][number];
type SdpaBackendRun = SdpaCase["backends"][string];

function judgeSdpa(data: SdpaData, context: BenchContext): ValidationItem[] {
  if (data.error) return [item("sdpa", "sdpa", TITLES.sdpa as string, "skip", data.error)];
  const items = data.cases.flatMap((c) => judgeSdpaCase(c, context));
  items.push(...judgeSdpaOverall(data, context));
  return items;
}

/** One shape: manual attention's timing, then each backend against it. */
function judgeSdpaCase(c: SdpaCase, context: BenchContext): ValidationItem[] {
  const shape = `${c.dtype} B${c.batch} H${c.heads} S${c.seq} D${c.headDim}`;
  const base = `sdpa.${c.dtype}.${c.batch}x${c.heads}x${c.seq}x${c.headDim}`;
  if (c.error) return [item(base, "sdpa", `SDPA ${shape}`, "skip", c.error)];
  const items: ValidationItem[] = [];
  if (!c.manual?.medianMs)
    items.push(
      item(
        `${base}.manual`,
        "sdpa",
        `manual attention ${shape}`,
        "fail",
        `raised ${c.manual?.error ?? "no timing"}`,
      ),
    );
  for (const [name, run] of Object.entries(c.backends))
    items.push(judgeSdpaBackend(`${base}.${name}`, `SDPA ${name} ${shape}`, name, run, c, context));
  return items;
}

function judgeSdpaBackend(
  id: string,
  title: string,
  name: string,
  run: SdpaBackendRun,
  c: SdpaCase,
  context: BenchContext,
): ValidationItem {
  if (!run.available) {
    // Flash kernels exist for sm_80 and newer; not having them there is worth a look.
    const expected = name === "flash" && (context.ccMajor ?? 0) >= 8 && c.headDim <= 256;
    return item(
      id,
      "sdpa",
      title,
      expected ? "warn" : "skip",
      `unavailable: ${run.reason ?? "no reason given"}`,
    );
  }
  if (run.ok === false)
    return item(
      id,
      "sdpa",
      title,
      "fail",
      `wrong result: rel. error ${run.relError} vs float32 manual attention`,
    );
  const speed = run.speedup ? `${run.speedup.toFixed(2)}x manual, ` : "";
  return item(
    id,
    "sdpa",
    title,
    "info",
    `${speed}${run.tflops?.toFixed(1)} TFLOP/s, median ${run.medianMs?.toFixed(3)} ms`,
    {
      measured: run.speedup
        ? { value: run.speedup, unit: "x manual" }
        : { value: run.tflops ?? 0, unit: "TFLOP/s" },
    },
  );
}

/** One verdict: the best fused backend's speedup over manual attention on the largest bf16 shape. */
function judgeSdpaOverall(data: SdpaData, context: BenchContext): ValidationItem[] {
  const cases = data.cases.filter((c) => !c.error && c.manual?.medianMs);
  if (cases.length === 0) return [];
  const byWork = [...cases].sort((a, b) => b.flops - a.flops || (a.dtype === "bfloat16" ? -1 : 1));
  const target = byWork.find((c) => c.dtype === "bfloat16") ?? byWork[0];
  if (!target) return [];
  const title = "SDPA uses a fused backend";
  const shape = `${target.dtype} B${target.batch} H${target.heads} S${target.seq} D${target.headDim}`;
  const fused = FUSED.map((name) => ({ name, run: target.backends[name] })).filter(
    (f) => f.run?.available && f.run.speedup,
  );
  if (fused.length === 0) {
    return [
      item(
        "sdpa.fused",
        "sdpa",
        title,
        "fail",
        `no fused backend runs for ${shape}: SDPA falls back to math (O(S^2) memory, no speedup over manual attention)`,
      ),
    ];
  }
  fused.sort((a, b) => (b.run?.speedup ?? 0) - (a.run?.speedup ?? 0));
  const best = fused[0] as { name: string; run: { speedup?: number | null } };
  const speedup = best.run.speedup ?? 0;
  const minimum = sdpaMinSpeedup(context.ccMajor ?? 0);
  const status: Status = speedup >= minimum ? "pass" : speedup >= 1 ? "warn" : "fail";
  const defaultRun = target.default;
  const dflt = defaultRun?.speedup ? `; default dispatch ${defaultRun.speedup.toFixed(2)}x` : "";
  return [
    item(
      "sdpa.fused",
      "sdpa",
      title,
      status,
      `best: ${best.name} ${speedup.toFixed(2)}x over manual attention at ${shape} (want >= ${minimum}x on this GPU)${dflt}`,
      {
        measured: { value: speedup, unit: "x manual" },
        reference: { value: minimum, unit: "x manual", what: "least speedup expected on this GPU" },
        ratio: speedup / minimum,
        // As ratios of the expected speedup: pass from the minimum, warn from 1x manual.
        limits: { pass: 1, warn: 1 / minimum },
      },
    ),
  ];
}

function judgeNccl(data: z.infer<typeof NcclDataSchema>): ValidationItem {
  const title = "NCCL all-reduce bus bandwidth";
  if (data.skipped) return item("nccl", "nccl", title, "skip", data.skipped);
  const sizes = data.sizes ?? [];
  const largest = sizes[sizes.length - 1];
  if (!largest) return item("nccl", "nccl", title, "fail", "no sizes measured");
  const rows = sizes
    .map((s) => `${(s.bytes / 2 ** 20).toFixed(0)} MiB ${s.busbwGBs.toFixed(1)} GB/s`)
    .join(", ");
  return item(
    "nccl",
    "nccl",
    title,
    "info",
    `${data.worldSize} ranks (${data.backend}), bus bandwidth: ${rows}; the knowledge base has no interconnect peak to judge against`,
    {
      measured: { value: largest.busbwGBs, unit: "GB/s" },
    },
  );
}
