/**
 * Two validate reports side by side (`validate --compare A.json B.json`): the environment facts
 * that differ (torch, CUDA, cuDNN, NCCL, driver, image, GPU) and every measured figure with its
 * ratio B / A. Both reports are judged again with this knowledge base before, so their items
 * line up by id whatever gpuprep wrote them.
 */
import type { Status, ValidateReport, ValidationItem } from "./report.js";

export interface EnvironmentFact {
  what: string;
  a: string;
  b: string;
  /** Both recorded and not equal (an older report may not record a fact: NOT_RECORDED). */
  differs: boolean;
}

/** What an older report holds for a fact it did not record (driver, machine: issue 27 added them). */
export const NOT_RECORDED = "not recorded";

export interface ComparedFigure {
  id: string;
  title: string;
  unit: string;
  a: number | null;
  b: number | null;
  /** b / a where both were measured in the same unit. */
  ratio: number | null;
  statusA: Status | null;
  statusB: Status | null;
}

interface ReportSide {
  file: string;
  createdAt: string;
  gpu: string;
  summary: ValidateReport["summary"];
}

export interface Comparison {
  a: ReportSide;
  b: ReportSide;
  environment: EnvironmentFact[];
  figures: ComparedFigure[];
}

/** A ratio within this of 1 is "the same" (run-to-run noise of these benchmarks is a few %). */
export const SAME_WITHIN = 0.05;

function environment(report: ValidateReport): Record<string, string> {
  const payload = report.payload;
  const env = payload.env.result;
  const smi = payload.nvidiaSmi.gpus[0];
  const hostEnv = payload.host?.env ?? {};
  const image =
    hostEnv["NVIDIA_PYTORCH_VERSION"] !== undefined
      ? `NGC PyTorch ${hostEnv["NVIDIA_PYTORCH_VERSION"]}`
      : report.transport.startsWith("image ")
        ? report.transport.slice("image ".length)
        : "none";
  return {
    GPU: report.gpu ? `${report.gpu.name} (sm_${report.gpu.computeCapability.replace(".", "")})` : "none",
    driver: smi?.driver_version ?? NOT_RECORDED,
    torch: env?.torch.version ?? "not importable",
    CUDA: env?.torch.cuda ?? "none",
    cuDNN: env?.cudnnVersion ? String(env.cudnnVersion) : "none",
    NCCL: env?.ncclVersion ?? "none",
    "arch list": env?.archList.join(" ") || "none",
    image,
    Python: `${report.python.version} (${report.python.executable})`,
    transport: report.transport,
    machine: payload.host?.machine ?? NOT_RECORDED,
  };
}

function side(report: ValidateReport, file: string): ReportSide {
  return { file, createdAt: report.createdAt, gpu: report.gpu?.name ?? "no GPU", summary: report.summary };
}

function measuredItems(report: ValidateReport): Map<string, ValidationItem> {
  return new Map(report.items.filter((i) => i.measured).map((i) => [i.id, i]));
}

/** One figure in A and B; a ratio only where both measured it in the same unit. */
function comparedFigure(
  id: string,
  x: ValidationItem | undefined,
  y: ValidationItem | undefined,
): ComparedFigure {
  const either = x ?? y;
  const [a, b] = [figureSide(x), figureSide(y)];
  return {
    id,
    title: either?.title ?? id,
    unit: either?.measured?.unit ?? "",
    a: a.value,
    b: b.value,
    ratio: ratioOf(x?.measured, y?.measured),
    statusA: a.status,
    statusB: b.status,
  };
}

/** One report's value and status of a figure; null where it lacks the figure. */
function figureSide(item: ValidationItem | undefined): { value: number | null; status: Status | null } {
  return { value: item?.measured?.value ?? null, status: item?.status ?? null };
}

function ratioOf(a: ValidationItem["measured"], b: ValidationItem["measured"]): number | null {
  if (!a || !b || a.unit !== b.unit) return null;
  const valueA = a.value ?? null;
  const valueB = b.value ?? null;
  return valueA && valueB !== null ? valueB / valueA : null;
}

export function compareReports(
  a: ValidateReport,
  b: ValidateReport,
  fileA: string,
  fileB: string,
): Comparison {
  const envA = environment(a);
  const envB = environment(b);
  const facts = Object.keys(envA).map((what) => {
    const valueA = envA[what] ?? "";
    const valueB = envB[what] ?? "";
    const recorded = valueA !== NOT_RECORDED && valueB !== NOT_RECORDED;
    return { what, a: valueA, b: valueB, differs: recorded && valueA !== valueB };
  });
  const itemsA = measuredItems(a);
  const itemsB = measuredItems(b);
  const ids = [...itemsA.keys(), ...[...itemsB.keys()].filter((id) => !itemsA.has(id))];
  const figures = ids.map((id) => comparedFigure(id, itemsA.get(id), itemsB.get(id)));
  // Differences first, in their own order.
  facts.sort((p, q) => Number(q.differs) - Number(p.differs));
  return { a: side(a, fileA), b: side(b, fileB), environment: facts, figures };
}

/** Faster, slower or the same, by SAME_WITHIN; null where one side lacks the figure. */
export function direction(figure: ComparedFigure): "faster" | "slower" | "same" | null {
  if (figure.ratio === null) return null;
  if (figure.ratio > 1 + SAME_WITHIN) return "faster";
  if (figure.ratio < 1 - SAME_WITHIN) return "slower";
  return "same";
}
