/** The environment checks, judged from the payload: torch, CUDA, GPU, architecture, kernel, numpy, extensions, model. */
import { z } from "zod";
import type { KnowledgeBase } from "../kb/index.js";
import { formatComputeCapability } from "../kb/compat.js";
import { judgeTorchArch } from "../judge/torch-arch.js";
import { judgeSdpaSwitches } from "../judge/sdpa-switches.js";
import { judgeTorchImport } from "../judge/torch-import.js";
import { judgeKernel } from "../judge/kernel.js";
import { judgeExtensionImport } from "../judge/extension-import.js";
import { ruleDocsUrl, statusOf, type Judgment } from "../judge/vocabulary.js";
import type { ChildRun, Payload, PayloadEnv } from "./payload.js";
import type { ValidationItem } from "./report.js";

function check(
  id: string,
  category: string,
  title: string,
  status: ValidationItem["status"],
  reason: string,
): ValidationItem {
  return { id: `check.${id}`, group: "check", category, title, status, reason };
}

/**
 * The item a shared judgment (src/judge/) makes in validate: its verdict in validate's word, its
 * message (plus what only validate measured) as the reason, and doctor's rule id and page.
 */
export function fromJudgment(
  id: string,
  category: string,
  title: string,
  judgment: Judgment,
  measuredHere = "",
): ValidationItem {
  const fix = judgment.fix
    ? ` Fix: ${judgment.fix.summary.replace(/\.$/, "")}: ${judgment.fix.commands.join("; ")}`
    : "";
  return {
    ...check(id, category, title, statusOf(judgment.verdict), `${judgment.message}${measuredHere}${fix}`),
    ruleId: judgment.id,
    docs: ruleDocsUrl(judgment.id),
  };
}

export function describeRun(run: ChildRun): string {
  const last = run.stderrTail ? lastLine(run.stderrTail) : "";
  const where = last && last !== run.error ? ` (stderr: ${last})` : "";
  return `${run.status}: ${run.error ?? "no detail"}${where}`;
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split("\n")
    .filter((line) => line.trim() !== "");
  return (lines[lines.length - 1] ?? "").slice(0, 300);
}

export function judgeChecks(payload: Payload, kb: KnowledgeBase): ValidationItem[] {
  const env = payload.env.result;
  if (!env) {
    return [torchImport(payload, null), ...judgeExtensions(payload), ...judgeModel(payload)];
  }
  const items: ValidationItem[] = [
    torchImport(payload, { version: env.torch.version, location: env.torch.file }),
    cudaBuild(env),
    gpuVisible(env, payload),
    ...archCoverage(env, kb),
    kernelRuns(env),
    numpyInterop(env),
  ];
  return [...items, ...judgeExtensions(payload), ...judgeModel(payload)];
}

/** The payload's import of torch, judged as doctor's torch-import-failed; stderr's last line where it adds to the error. */
function torchImport(payload: Payload, torch: { version: string; location: string } | null): ValidationItem {
  // A child that ended "ok" without a result did not import torch either.
  const reported = payload.env.run;
  const run =
    torch === null && reported.status === "ok"
      ? {
          ...reported,
          status: "error" as const,
          error: reported.error ?? "the torch child reported no result",
        }
      : reported;
  const last = run.stderrTail ? lastLine(run.stderrTail) : "";
  const stderr = run.status !== "ok" && last && !(run.error ?? "").includes(last) ? ` stderr: ${last}` : "";
  return fromJudgment("torch-import", "torch", "torch imports", judgeTorchImport({ run, torch }), stderr);
}

function cudaBuild(env: PayloadEnv): ValidationItem {
  if (env.torch.cuda) {
    return check("cuda-build", "torch", "torch built with CUDA", "pass", `CUDA ${env.torch.cuda} build`);
  }
  return check(
    "cuda-build",
    "torch",
    "torch built with CUDA",
    "fail",
    `torch ${env.torch.version} is a CPU-only build (torch.version.cuda is None): install a CUDA build (\`gpuprep doctor\` names the index)`,
  );
}

function gpuVisible(env: PayloadEnv, payload: Payload): ValidationItem {
  if (env.cudaAvailable && env.deviceCount > 0) {
    const names = env.devices.map((d) => `${d.name} (${d.capability.join(".")})`).join(", ");
    return check(
      "gpu-visible",
      "gpu",
      "GPU visible to torch",
      "pass",
      `${env.deviceCount} device(s): ${names}`,
    );
  }
  const smi = payload.nvidiaSmi;
  const driver =
    smi.status === "ok"
      ? `nvidia-smi sees ${smi.gpus.length} GPU(s)`
      : `nvidia-smi: ${smi.error ?? smi.status}`;
  const why = env.cudaInitError
    ? `CUDA init failed: ${env.cudaInitError}`
    : env.torch.cuda
      ? "torch.cuda.is_available() is False"
      : "a CPU-only torch cannot use a GPU";
  return check("gpu-visible", "gpu", "GPU visible to torch", "fail", `${why}; ${driver}`);
}

/** One item per distinct capability among the devices, judged as doctor's torch-arch-not-covered. */
function archCoverage(env: PayloadEnv, kb: KnowledgeBase): ValidationItem[] {
  if (env.devices.length === 0) {
    return [check("arch", "arch", "GPU architecture covered natively", "skip", "no GPU visible to torch")];
  }
  const seen = new Set<string>();
  const items: ValidationItem[] = [];
  for (const device of env.devices) {
    const [major, minor] = device.capability;
    const cc = { major, minor };
    const key = formatComputeCapability(cc);
    if (seen.has(key)) continue;
    seen.add(key);
    const judgment = judgeTorchArch({
      torchVersion: env.torch.version,
      archList: env.archList,
      gpu: { name: device.name, cc },
      architecture: kb.arch(cc)?.architecture ?? null,
    });
    const torchWarning = env.warnings.find((w) => /compatible|capability|sm_\d+/i.test(w));
    // The judgment's message ends a sentence (it is doctor's finding message too).
    const extra = torchWarning ? ` torch warned: ${torchWarning.slice(0, 200)}` : "";
    const id = seen.size === 1 ? "arch" : `arch.${key}`;
    items.push(fromJudgment(id, "arch", `sm_${major}${minor} covered natively`, judgment, extra));
  }
  return items;
}

/** The SDPA switches as the shared torch child reports them (validate.py names the object sdpaEnabled). */
const SdpaEnabledSchema = z.looseObject({
  flash: z.boolean().nullable().optional(),
  efficient: z.boolean().nullable().optional(),
  cudnn: z.boolean().nullable().optional(),
});

/**
 * The process-wide SDPA switches, judged as doctor's sdpa-fast-kernels-off. No item without a GPU
 * (as check.tf32) or in payloads that do not report the switches.
 */
export function sdpaSwitches(env: PayloadEnv): ValidationItem[] {
  if (!env.cudaAvailable) return [];
  const parsed = SdpaEnabledSchema.safeParse((env as Record<string, unknown>)["sdpaEnabled"]);
  if (!parsed.success) return [];
  const flags = parsed.data;
  const judgment = judgeSdpaSwitches({
    cudaAvailable: env.cudaAvailable,
    flash: flags.flash ?? null,
    efficient: flags.efficient ?? null,
    cudnn: flags.cudnn ?? null,
  });
  return [fromJudgment("sdpa-backends", "sdpa", "SDPA fast backends switched on", judgment)];
}

/** The torch child's kernel check, judged as doctor's torch-kernel-launch-failed. */
function kernelRuns(env: PayloadEnv): ValidationItem {
  const title = "a CUDA kernel runs with the right result";
  return fromJudgment("kernel", "kernel", title, judgeKernel({ kernel: env.kernel }));
}

function numpyInterop(env: PayloadEnv): ValidationItem {
  const title = "numpy interop";
  const numpy = env.numpy;
  if (!numpy.version) {
    return check(
      "numpy",
      "numpy",
      title,
      "warn",
      `numpy does not import (${numpy.error ?? "not installed"})`,
    );
  }
  if (numpy.roundTrip) {
    return check(
      "numpy",
      "numpy",
      title,
      "pass",
      `numpy ${numpy.version}: tensor -> array -> tensor round trip`,
    );
  }
  return check(
    "numpy",
    "numpy",
    title,
    "fail",
    `numpy ${numpy.version}: ${numpy.error ?? "round trip failed"} (a numpy major torch was not built against?)`,
  );
}

/** Each extension's import, judged as doctor's extension-import-failed (a hang is a warning there and here). */
function judgeExtensions(payload: Payload): ValidationItem[] {
  if (!payload.extensions) return [];
  return payload.extensions.map((ext) => {
    const id = `extension.${ext.module}`;
    const title = `import ${ext.module}`;
    if (!ext.installed) return check(id, "extension", title, "skip", "not installed");
    if (!ext.run) return check(id, "extension", title, "fail", "did not run");
    const judgment = judgeExtensionImport({ module: ext.module, run: ext.run });
    const version = ext.result?.version ? ` ${ext.result.version}` : "";
    // What validate adds: the version and time of a good import, the child's own words of a bad one.
    const measured =
      judgment.verdict === "pass"
        ? `:${version || " no version"} in ${ext.run.durationMs} ms`
        : ` ${describeRun(ext.run)}`;
    return fromJudgment(id, "extension", title, judgment, measured);
  });
}

function judgeModel(payload: Payload): ValidationItem[] {
  const model = payload.model;
  if (!model) return [];
  const title = "model loads from a local path";
  if (!model.result) return [check("model", "model", title, "fail", describeRun(model.run))];
  const r = model.result;
  const dtypes = Object.entries(r.dtypes)
    .map(([dtype, count]) => `${dtype} ${count}`)
    .join(", ");
  const summary = `${r.tensors} tensors, ${r.parameters.toLocaleString("en-US")} parameters (${dtypes}) from ${r.files.length} file(s) in ${r.loadSeconds} s`;
  if (r.tensors === 0) return [check("model", "model", title, "fail", `no tensors in ${r.path}`)];
  if (r.nonFinite.length > 0) {
    return [check("model", "model", title, "warn", `${summary}; NaN/Inf in: ${r.nonFinite.join(", ")}`)];
  }
  return [check("model", "model", title, "pass", summary)];
}
