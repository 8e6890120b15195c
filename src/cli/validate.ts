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
    description: "also load this model: a .safetensors / torch.save file or a Hugging Face-style dir",
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

export const validateCommand = defineCommand({
  name: "validate",
  title: "environment checks and GPU benchmarks against the hardware's own peak",
  intro: `Checks: torch built with CUDA, GPU visible, the GPU's architecture covered by SASS (not JIT),
a real kernel runs with a checked result, numpy interop, common extensions import, and a model
loads from --model PATH. Benchmarks: SDPA per backend vs manual attention, bf16/fp16/tf32
matmul, device memory bandwidth, pinned host<->device bandwidth, NCCL all-reduce (2+ GPUs).`,
  options: OPTIONS,
  outputs: ["junit", "html", "save"],
  outro:
    "exit: 0 every check passed or was skipped (warnings allowed), 1 something failed, 2 the tool could not run",
  examples: [
    ["gpuprep validate --quick", "the checks and fewer benchmark shapes, with python3"],
    [
      "gpuprep validate --python .venv/bin/python --only matmul,sdpa --junit validate.xml",
      "two benchmarks, JUnit for CI",
    ],
    ["gpuprep validate --from report.json --html report.html", "a saved --json report again, as HTML"],
  ],
  async run({ values }) {
    const place = onePlace(
      "validate",
      values,
      ["container", "image", "ssh", "from"],
      "name one place to validate",
    );
    // As doctor's --from: a saved result is judged again; flags that shape a run have nothing to do.
    const runFlags = (["python", "quick", "only", "model", "save"] as const).filter(
      (f) => values[f] !== undefined,
    );
    if (values.from !== undefined && runFlags.length > 0)
      throw new UserError(
        `validate: --from judges a saved report; --${runFlags[0]} applies only when validate runs`,
        `drop --${runFlags[0]}, or drop --from`,
      );
    const kb = loadKnowledgeBase();
    let payload: Payload;
    let transport = "local";
    if (values.from) {
      const saved = readSaved(values.from);
      payload = saved.payload;
      transport = saved.transport;
    } else if (place === null) {
      const options = payloadOptions(values, true);
      const progress = startProgress("validate", `checks and benchmarks in ${values.python ?? "python3"}`);
      try {
        payload = await runPayload(values.python ?? "python3", options);
      } finally {
        progress.end(); // gone before the report (or an error) is printed
      }
    } else {
      // The same transports as doctor: the payload's source travels on stdin, nothing is installed.
      const remote = chooseTransport({
        python: values.python,
        container: values.container,
        image: values.image,
        ssh: values.ssh,
      });
      const options = payloadOptions(values, false);
      const progress = startProgress("validate", `checks and benchmarks in ${remote.describe()}`);
      try {
        payload = await runPayloadThrough(remote, options);
      } finally {
        progress.end();
      }
      transport = `${remote.kind} ${remote.ref ?? ""}`.trim();
    }
    const report = judgePayload(payload, kb, { transport });
    if (values.junit)
      writeOutputFile(values.junit, renderJUnit(toJUnitSuites(report), "gpuprep validate"), "--junit");
    if (values.html) writeOutputFile(values.html, renderHtmlReport(toHtmlReport(report)), "--html");
    if (values.save) writeOutputFile(values.save, renderJson(report), "--save");
    if (values.json) writeDocument(renderJson(report));
    else writeText(`${renderText(report, makeStyle(useColor()))}\n`);
    return report.summary.fail > 0 ? EXIT_FINDINGS : EXIT_OK;
  },
});

/** `local`: --model names a path on this machine, checked here; elsewhere it is the remote's path. */
function payloadOptions(
  values: { quick?: boolean; only?: string; model?: string },
  local: boolean,
): PayloadOptions {
  const options: PayloadOptions = { quick: values.quick === true };
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

function readSaved(file: string): { payload: Payload; transport: string } {
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
  return { payload: parsePayload(report.payload, file), transport: String(report.transport ?? "local") };
}
