/** `gpuprep validate`: environment checks and GPU benchmarks, judged against the GPU's own peak. */
import { existsSync } from "node:fs";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { parseJsonInput } from "../util/json-input.js";
import { writeText } from "../report/terminal.js";
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
import { onePlace, parseCommandArgs } from "./args.js";
import { EXIT_FINDINGS, EXIT_OK, type Command } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { startProgress } from "../util/console-status.js";

const HELP = `gpuprep validate: environment checks and GPU benchmarks against the hardware's own peak

usage: gpuprep validate [flags]

Checks: torch built with CUDA, GPU visible, the GPU's architecture covered by SASS (not JIT),
a real kernel runs with a checked result, numpy interop, common extensions import, and a model
loads from --model PATH. Benchmarks: SDPA per backend vs manual attention, bf16/fp16/tf32
matmul, device memory bandwidth, pinned host<->device bandwidth, NCCL all-reduce (2+ GPUs).

flags:
  --python PATH   the interpreter of the environment to validate (default: python3 on PATH;
                  inside a container, image or ssh host: the interpreter there)
  --container NAME  validate inside this running container (docker exec)
  --image REF     validate in a throwaway container of this image (docker run --rm --gpus all)
  --ssh HOST      validate on this host over ssh (BatchMode; Python >= 3.8 there)
  --quick         fewer shapes and sizes
  --only LIST     comma-separated: ${ONLY_NAMES.join(", ")}
                  (the torch/CUDA/GPU checks always run)
  --model PATH    also load this model: a .safetensors / torch.save file or a Hugging Face-style dir
  --json          print the report as JSON (it holds the raw payload; --from reads it back)
  --junit FILE    also write JUnit XML
  --html FILE     also write a self-contained HTML report
  --save FILE     also write the report with its raw payload to FILE (what --json prints)
  --from FILE     judge and render the payload of a report written by --save or --json again,
                  with this gpuprep's knowledge base, instead of running anything

exit: 0 every check passed or was skipped (warnings allowed), 1 something failed, 2 the tool could not run`;

export const validateCommand: Command = {
  name: "validate",
  summary: "environment checks and GPU benchmarks against the hardware's peak",
  help: HELP,
  examples: [
    ["gpuprep validate --quick", "the checks and fewer benchmark shapes, with python3"],
    [
      "gpuprep validate --python .venv/bin/python --only matmul,sdpa --junit validate.xml",
      "two benchmarks, JUnit for CI",
    ],
    ["gpuprep validate --from report.json --html report.html", "a saved --json report again, as HTML"],
  ],
  async run(argv) {
    const { values } = parseCommandArgs(
      "validate",
      {
        args: argv,
        options: {
          python: { type: "string" },
          container: { type: "string" },
          image: { type: "string" },
          ssh: { type: "string" },
          quick: { type: "boolean" },
          only: { type: "string" },
          model: { type: "string" },
          json: { type: "boolean" },
          junit: { type: "string" },
          html: { type: "string" },
          from: { type: "string" },
          save: { type: "string" },
        },
        allowPositionals: false,
      },
      { outputs: ["junit", "html", "save"] },
    );
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
    if (values.save) writeOutputFile(values.save, `${JSON.stringify(report, null, 2)}\n`, "--save");
    if (values.json) console.log(JSON.stringify(report, null, 2));
    else writeText(`${renderText(report, makeStyle(useColor()))}\n`);
    return report.summary.fail > 0 ? EXIT_FINDINGS : EXIT_OK;
  },
};

/** `local`: --model names a path on this machine, checked here; elsewhere it is the remote's path. */
function payloadOptions(
  values: { quick?: boolean; only?: string; model?: string },
  local: boolean,
): PayloadOptions {
  const options: PayloadOptions = { quick: values.quick === true };
  if (values.only !== undefined) {
    const names = values.only
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    const unknown = names.filter((n) => !(ONLY_NAMES as readonly string[]).includes(n));
    if (names.length === 0 || unknown.length > 0) {
      throw new UserError(
        `validate: --only does not know "${unknown.join(", ") || values.only}"`,
        `names: ${ONLY_NAMES.join(", ")}`,
      );
    }
    options.only = names;
  }
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
