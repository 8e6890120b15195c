import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { modelConfigFromJson, readModelConfig } from "./hf-config.js";

// Real counts: each config built with transformers' from_config on the meta device (see the file's madeBy).
const fixturePath = new URL("../../../test/fixtures/memory/hf-param-counts.json", import.meta.url);
const captured = JSON.parse(readFileSync(fixturePath, "utf8")) as {
  madeBy: string;
  models: { name: string; modelClass: string; parameterCount: number; config: Record<string, unknown> }[];
};

test("the fixture covers every family the benchmark uses", () => {
  const families = new Set(captured.models.map((m) => m.config["model_type"]));
  for (const family of ["gpt2", "llama", "mistral", "qwen2", "bert", "t5", "vit", "resnet"])
    assert.ok(families.has(family), family);
});

for (const model of captured.models) {
  test(`parameter count of ${model.name} (${model.modelClass}) matches the real model exactly`, () => {
    const config = modelConfigFromJson(model.config, model.name);
    assert.equal(config.parameterCount, model.parameterCount);
    assert.equal(config.architecture, model.modelClass);
  });
}

function writeConfig(content: string, inDirectory = false): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-hfconfig-"));
  const target = inDirectory ? join(dir, "model") : dir;
  if (inDirectory) mkdirSync(target);
  writeFileSync(join(target, "config.json"), content);
  return inDirectory ? target : join(dir, "config.json");
}

test("reads a config.json, or the directory holding it", () => {
  const gpt2 = captured.models.find((m) => m.name === "gpt2-small");
  assert.ok(gpt2);
  const text = JSON.stringify(gpt2.config);
  assert.equal(readModelConfig(writeConfig(text)).parameterCount, 124439808);
  assert.equal(readModelConfig(writeConfig(text, true)).parameterCount, 124439808);
});

function oneLineUserError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UserError, String(error));
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

test("bad configs give a one-line UserError", () => {
  oneLineUserError(() => readModelConfig(writeConfig("{ not json")), /is not valid JSON/);
  oneLineUserError(() => readModelConfig(writeConfig("[1, 2]")), /not a JSON object/);
  oneLineUserError(() => readModelConfig("/nonexistent/config.json"), /cannot read model config/);
  oneLineUserError(() => readModelConfig(writeConfig('{"hidden_size": 8}')), /no "model_type"/);
  oneLineUserError(
    () => readModelConfig(writeConfig('{"model_type": "mamba"}')),
    /model_type "mamba" is not one the formula tier knows/,
  );
  oneLineUserError(
    () => readModelConfig(writeConfig('{"model_type": "llama", "hidden_size": 64}')),
    /"num_attention_heads" is missing/,
  );
  oneLineUserError(
    () =>
      readModelConfig(
        writeConfig('{"model_type": "gpt2", "n_embd": "768", "n_layer": 12, "n_head": 12, "vocab_size": 5}'),
      ),
    /"n_embd" is not a positive integer/,
  );
});

test("the unknown-model_type error names the supported families", () => {
  try {
    modelConfigFromJson({ model_type: "falcon" }, "config.json");
    assert.fail("no error");
  } catch (error) {
    assert.ok(error instanceof UserError);
    assert.match(error.hint ?? "", /gpt2, llama, mistral, qwen2, bert, t5, vit, resnet/);
  }
});
