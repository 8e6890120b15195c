/** `gpuprep validate`: environment checks and GPU benchmarks, judged against the GPU's own peak. */
import { existsSync } from "node:fs";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { parseJsonInput } from "../util/json-input.js";
import { writeDocument, writeText } from "../report/terminal.js";
import { renderJson } from "../report/envelope.js";
import { writeOutputFile } from "../util/write-output.js";
import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { chooseTransport } from "../gather/index.js";
import { renderHtmlReport } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import { judgePayload } from "../validate/judge.js";
import {
  ONLY_NAMES,
  parsePayload,
  runPayload,
  runPayloadThrough,
  type Payload,
  type PayloadOptions,
} from "../validate/payload.js";
import { REPORT_SCHEMA_ID, type ValidateReport } from "../validate/report.js";
import { renderText, toHtmlReport, toJUnitSuites } from "../report/validate.js";
import { compareHtml, compareText } from "../report/validate-compare.js";
import { compareReports } from "../validate/compare.js";
import { checkedOnlyNames, onePlace } from "./args.js";
import { EXIT_FINDINGS, EXIT_OK, defineCommand, type OptionTable } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { startProgress } from "../util/console-status.js";

const OPTIONS = {
  python: {
    type: "string",
    value: "PATH",
    description:
      "the interpreter of the environment to validate (default: python3 on PATH;\ninside a container, image or ssh host: the interpreter there)",
  },
  container: {
    type: "string",
    value: "NAME",
    description: "validate inside this running container (docker exec)",
  },
  image: {
    type: "string",
    value: "REF",
    description: "validate in a throwaway container of this image (docker run --rm --gpus all)",
  },
  ssh: {
    type: "string",
    value: "HOST",
    description: "validate on this host over ssh (BatchMode; Python >= 3.8 there)",
  },
  quick: { type: "boolean", description: "fewer shapes and sizes" },
  only: {
    type: "string",
    value: "LIST",
    description: `comma-separated: ${ONLY_NAMES.join(", ")}\n(the torch/CUDA/GPU checks always run)`,
  },
  model: {
    type: "string",
    value: "PATH",
    description:
      "a model: weights (.safetensors / torch.save file or a Hugging Face-style dir) are loaded;\na config.json (or a dir with one) is built without weights and trained a few steps for MFU",
  },
  "seq-len": {
    type: "string",
    value: "N",
    description: "the MFU step's sequence length (default: min(2048, the model's))",
  },
  batch: { type: "string", value: "N", description: "the MFU step's batch size (default 8)" },
  "jit-smoke": {
    type: "string",
    value: "MODULE:FUNC",
    multiple: true,
    description: "also call this no-argument function of your own extension in the JIT check\n(repeatable)",
  },
  compare: {
    type: "boolean",
    description:
      "compare two saved reports (A.json B.json): every figure with its ratio B/A,\nand what differs in their environments; text, or --html FILE",
  },
  json: {
    type: "boolean",
    description: "print the report as JSON (it holds the raw payload; --from reads it back)",
  },
  junit: { type: "string", value: "FILE", description: "also write JUnit XML" },
  html: { type: "string", value: "FILE", description: "also write a self-contained HTML report" },
  save: {
    type: "string",
    value: "FILE",
    description: "also write the report with its raw payload to FILE (what --json prints)",
  },
  from: {
    type: "string",
    value: "FILE",
    description:
      "judge and render the payload of a report written by --save or --json again,\nwith this gpuprep's knowledge base, instead of running anything",
  },
} as const satisfies OptionTable;

type Values = Parameters<Parameters<typeof defineCommand<typeof OPTIONS>>[0]["run"]>[0]["values"];

/** As doctor's --from: a saved result is judged again; flags that shape a run have nothing to do. */
function checkFromFlags(values: Values): void {
  const runFlags = (
    ["python", "quick", "only", "model", "save", "seq-len", "batch", "jit-smoke"] as const
  ).filter((f) => values[f] !== undefined);
  if (values.from !== undefined && runFlags.length > 0)
    throw new UserError(
      `validate: --from judges a saved report; --${runFlags[0]} applies only when validate runs`,
      `drop --${runFlags[0]}, or drop --from`,
    );
}

/** The payload to judge: read from --from, or run here, or run through a transport to `place`. */
async function payloadFor(values: Values, place: string | null): Promise<SavedPayload> {
  if (values.from) return readSaved(values.from);
  if (place === null) {
    const options = payloadOptions(values, true);
    const progress = startProgress("validate", `checks and benchmarks in ${values.python ?? "python3"}`);
    try {
      return {
        payload: await runPayload(values.python ?? "python3", options),
        transport: "local",
        createdAt: undefined,
      };
    } finally {
      progress.end(); // gone before the report (or an error) is printed
    }
  }
  // The same transports as doctor: the payload's source travels on stdin, nothing is installed.
  const remote = chooseTransport({
    python: values.python,
    container: values.container,
    image: values.image,
    ssh: values.ssh,
  });
  const options = payloadOptions(values, false);
  const progress = startProgress("validate", `checks and benchmarks in ${remote.describe()}`);
  let payload: Payload;
  try {
    payload = await runPayloadThrough(remote, options);
  } finally {
    progress.end();
  }
  return { payload, transport: `${remote.kind} ${remote.ref ?? ""}`.trim(), createdAt: undefined };
}

/** --junit, --html and --save files, then the report on stdout (text, or --json). */
function writeReport(report: ValidateReport, values: Values): void {
  if (values.junit)
    writeOutputFile(values.junit, renderJUnit(toJUnitSuites(report), "gpuprep validate"), "--junit");
  if (values.html) writeOutputFile(values.html, renderHtmlReport(toHtmlReport(report)), "--html");
  if (values.save) writeOutputFile(values.save, renderJson(report), "--save");
  if (values.json) writeDocument(renderJson(report));
  else writeText(`${renderText(report, makeStyle(useColor()))}\n`);
}

export const validateCommand = defineCommand({
  name: "validate",
  title: "environment checks and GPU benchmarks against the hardware's own peak",
  intro: `Checks: torch built with CUDA, GPU visible, the GPU's architecture covered by SASS (not JIT),
a real kernel runs with a checked result, numpy interop, common extensions import, a model
loads from --model PATH, and the kernels run again with CUDA_DISABLE_PTX_JIT=1 (what fails
there ran only through driver JIT). Benchmarks: SDPA per backend vs manual attention and
which backend the default call ran, bf16/fp16/tf32/fp32 matmul, fp8/int8 (mxfp8/nvfp4 on
Blackwell) GEMMs, the kernels each ran (torch.profiler), device memory bandwidth, pinned
host<->device bandwidth, NCCL all-reduce (2+ GPUs), and with a model config the MFU of a
training step.`,
  options: OPTIONS,
  positionals: "[A.json B.json (with --compare)]",
  outputs: ["junit", "html", "save"],
  outro:
    "exit: 0 every check passed or was skipped (warnings allowed), 1 something failed, 2 the tool could not run",
  examples: [
    ["gpuprep validate --quick", "the checks and fewer benchmark shapes, with python3"],
    [
      "gpuprep validate --python .venv/bin/python --only matmul,sdpa --junit validate.xml",
      "two benchmarks, JUnit for CI",
    ],
    [
      "gpuprep validate --model ./my-model/config.json --seq-len 2048 --batch 8",
      "also the MFU of a training step of that model (built from its config, no weights)",
    ],
    [
      "gpuprep validate --compare before.json after.json --html diff.html",
      "two saved reports side by side, with ratios and environment differences",
    ],
  ],
  async run({ values, positionals }) {
    if (values.compare) return runCompare(values, positionals);
    if (positionals.length > 0)
      throw new UserError(
        `validate: unexpected argument "${positionals[0]}"`,
        "to compare two saved reports: gpuprep validate --compare A.json B.json",
      );
    const place = onePlace(
      "validate",
      values,
      ["container", "image", "ssh", "from"],
      "name one place to validate",
    );
    checkFromFlags(values);
    const kb = loadKnowledgeBase();
    const { payload, transport, createdAt } = await payloadFor(values, place);
    const report = judgePayload(payload, kb, { transport, ...(createdAt ? { createdAt } : {}) });
    writeReport(report, values);
    return report.summary.fail > 0 ? EXIT_FINDINGS : EXIT_OK;
  },
});

/** `local`: --model names a path on this machine, checked here; elsewhere it is the remote's path. */
function payloadOptions(
  values: {
    quick?: boolean;
    only?: string;
    model?: string;
    "seq-len"?: string;
    batch?: string;
    "jit-smoke"?: string[];
  },
  local: boolean,
): PayloadOptions {
  const options: PayloadOptions = { quick: values.quick === true };
  const seqLen = positiveWhole("seq-len", values["seq-len"]);
  const batch = positiveWhole("batch", values.batch);
  if ((seqLen !== null || batch !== null) && values.model === undefined)
    throw new UserError(
      `validate: --${seqLen !== null ? "seq-len" : "batch"} shapes the MFU step, which needs --model`,
      "pass --model DIR|config.json",
    );
  if (seqLen !== null) options.seqLen = seqLen;
  if (batch !== null) options.batch = batch;
  if (values["jit-smoke"]) options.jitSmokes = values["jit-smoke"].map(checkedSmoke);
  if (values.only !== undefined) options.only = checkedOnlyNames("validate", values.only, ONLY_NAMES);
  if (values.model !== undefined && !local) options.model = values.model;
  else if (values.model !== undefined) {
    const path = resolve(values.model);
    if (!existsSync(path)) {
      throw new UserError(
        `validate: --model ${values.model} does not exist`,
        "pass a .safetensors / .pt / .bin file or a model directory",
      );
    }
    options.model = path;
  }
  return options;
}

function positiveWhole(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UserError(`validate: --${flag} ${value} is not a positive whole number`, `e.g. --${flag} 8`);
  return Number(value);
}

/** MODULE:FUNCTION, both Python names (the module dotted). */
function checkedSmoke(spec: string): string {
  if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$/.test(spec))
    throw new UserError(
      `validate: --jit-smoke "${spec}" is not MODULE:FUNCTION`,
      "name an importable module and a function it defines that takes no arguments, e.g. --jit-smoke my_ext:smoke",
    );
  return spec;
}

/** `--compare A.json B.json`: both judged again with this knowledge base, side by side. */
function runCompare(
  values: Record<string, unknown> & { html?: string; json?: boolean },
  positionals: string[],
): number {
  const others = Object.keys(values).filter(
    (flag) =>
      values[flag] !== undefined && !["compare", "html", "quiet", "verbose", "no-overlay"].includes(flag),
  );
  if (positionals.length !== 2)
    throw new UserError(
      `validate: --compare takes two saved reports, got ${positionals.length}`,
      "gpuprep validate --compare A.json B.json [--html FILE]",
    );
  if (others.length > 0)
    throw new UserError(
      `validate: --compare reads two saved reports; --${others[0]} does not apply`,
      "gpuprep validate --compare A.json B.json [--html FILE]",
    );
  const kb = loadKnowledgeBase();
  const [a, b] = positionals.map((file) => {
    const saved = readSaved(file);
    return judgePayload(saved.payload, kb, { transport: saved.transport, createdAt: saved.createdAt });
  }) as [ValidateReport, ValidateReport];
  const comparison = compareReports(a, b, positionals[0] as string, positionals[1] as string);
  if (values.html) writeOutputFile(values.html, renderHtmlReport(compareHtml(comparison)), "--html");
  writeText(`${compareText(comparison, makeStyle(useColor()))}\n`);
  return EXIT_OK;
}

interface SavedPayload {
  payload: Payload;
  transport: string;
  createdAt: string | undefined;
}

function readSaved(file: string): SavedPayload {
  const text = readTextFile(file, {
    maxBytes: READ_LIMITS.snapshot,
    hint: "pass a file written by `gpuprep validate --json`",
  });
  const data = parseJsonInput(text, `validate: ${file}`, "pass a file written by `gpuprep validate --json`");
  const report = data as Partial<ValidateReport> | null;
  if (!report || typeof report !== "object" || report.schema !== REPORT_SCHEMA_ID) {
    throw new UserError(
      `validate: ${file} is not a validate report (no "schema": "${REPORT_SCHEMA_ID}")`,
      "pass a file written by `gpuprep validate --json`",
    );
  }
  return {
    payload: parsePayload(report.payload, file),
    transport: String(report.transport ?? "local"),
    createdAt: typeof report.createdAt === "string" ? report.createdAt : undefined,
  };
}
