/** Test helpers: the captured HF configs (test/fixtures/memory/hf-param-counts.json) and a default work spec. */
import { readFileSync } from "node:fs";
import { type ModelConfig, modelConfigFromJson } from "../../src/memory/hf-config.js";
import type { WorkSpec } from "../../src/memory/types.js";

/** Tests run from dist/src/memory and dist/test/memory (both three levels down); fixtures stay in the source tree. */
export const MEMORY_FIXTURES = new URL("../../../test/fixtures/memory/", import.meta.url);
export const FACTS_FIXTURES = new URL("../../../test/fixtures/facts/", import.meta.url);

const captured = JSON.parse(readFileSync(new URL("hf-param-counts.json", MEMORY_FIXTURES), "utf8")) as {
  models: { name: string; parameterCount: number; config: Record<string, unknown> }[];
};

export function capturedModel(name: string): ModelConfig {
  const model = captured.models.find((m) => m.name === name);
  if (!model) throw new Error(`no captured model ${name}`);
  return modelConfigFromJson(model.config, name);
}

export function capturedConfigJson(name: string): Record<string, unknown> {
  const model = captured.models.find((m) => m.name === name);
  if (!model) throw new Error(`no captured model ${name}`);
  return structuredClone(model.config);
}

/** Mixed-precision training as the research note's H100 cells ran it. */
export const AMP_TRAIN: WorkSpec = {
  task: "train",
  amp: "bf16",
  dtype: "float32",
  optimizer: "adamw",
  gradCheckpointing: false,
  seqLen: 1024,
  imageSize: null,
  evalStep: false,
  lora: null,
};
