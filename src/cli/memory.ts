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
import { estimateMemory } from "../memory/estimate.js";
import { budgetFor, targetMemory } from "../memory/formula-bridge.js";
import { MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION } from "../memory/report-types.js";
import { TRACE_TORCH_NEEDED } from "../memory/trace-tier.js";
import { renderJsonDocument } from "../report/envelope.js";
import { renderMemoryHtml } from "../report/memory-html.js";
import { renderMemoryText } from "../report/memory-text.js";
import { makeStyle, useColor } from "../report/style.js";
import { writeDocument, writeText } from "../report/terminal.js";
import { writeOutputFile } from "../util/write-output.js";
import { onePlace } from "./args.js";
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
    checkMachineFlags(values);
    const source = modelSource(values);
    const work = workSpec(values, source.kind === "factory" ? null : (source.data ?? null));
    const batch = parseBatch(values.batch);
    const tier = oneOf("tier", values.tier, ["trace", "formula", "auto"] as const, "auto");
    const margin = values.margin === undefined ? 0.05 : Number(values.margin);
    if (!(margin >= 0 && margin < 1))
      throw new UserError(
        `memory: --margin ${values.margin} is not a fraction in [0, 1)`,
        "e.g. --margin 0.05",
      );
    const timeoutS = positiveNumber("timeout", values.timeout);
    const seedRule = seedRuleInput(values);
    const trialDevice = oneOf("trial-device", values["trial-device"], ["cuda", "cpu"] as const, "cuda");
    const transport = chooseTransport({
      python: values.python,
      container: values.container,
      image: values.image,
      ssh: values.ssh,
    });
    const facts = await machineFacts(values);
    const target = values.target !== undefined ? targetMemory(values.target) : null;
    const device = budgetFor(facts, target, margin);
    const report = await estimateMemory({
      source,
      work,
      batch,
      tier,
      device,
      transport,
      timeoutS,
      measure: values.measure === true,
      trialDevice,
      seedRule,
    });
    if (values.html !== undefined) writeOutputFile(values.html, renderMemoryHtml(report), "--html");
    if (values.json) writeDocument(renderJsonDocument(MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION, report));
    else writeText(renderMemoryText(report, makeStyle(useColor())));
    if (device.totalBytes === 0) return EXIT_TOOL_ERROR;
    if (values.measure && report.measuredMaxBatch === null) return EXIT_FINDINGS;
    return report.verdict.fits ? EXIT_OK : EXIT_FINDINGS;
  },
});

/** --from and --save as in doctor and init: a snapshot instead of gathering, or what was gathered. */
function checkMachineFlags(values: Values): void {
  if (values.from !== undefined && values.target !== undefined)
    throw new UserError("memory: --from and --target cannot be combined", "name one machine");
  if (values.save !== undefined && (values.from !== undefined || values.target !== undefined))
    throw new UserError(
      "memory: --save writes the facts gathered here; with --from or --target nothing is gathered",
      "drop --save, or drop --from/--target",
    );
}

/** Seed 001's rule: --current-batch with one of --current-memory GiB or --pid. */
function seedRuleInput(values: Values) {
  const currentBatch = positiveInt("current-batch", values["current-batch"]);
  const currentGiB = positiveNumber("current-memory", values["current-memory"]);
  const pid = positiveInt("pid", values.pid);
  if (
    (currentGiB !== null || pid !== null) !== (currentBatch !== null) ||
    (currentGiB !== null && pid !== null)
  )
    throw new UserError(
      "memory: seed 001's rule needs --current-batch N and one of --current-memory GiB or --pid PID",
      "e.g. --current-batch 8 --current-memory 30",
    );
  if (currentBatch === null) return null;
  return { currentBatch, currentBytes: currentGiB === null ? null : Math.round(currentGiB * GIB), pid };
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
