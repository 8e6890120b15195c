/** memory.py's framed output and the Hugging Face cache lookup, without running torch. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFrame, parseMemoryOutput } from "../../src/memory/payload.js";
import { hfCacheConfig, parseBatch } from "../../src/cli/memory-input.js";
import { localTransport } from "../../src/transports/local.js";
import { runMemoryPayload } from "../../src/memory/payload.js";
import { needs, PYTHON3_TORCH } from "../support/needs.js";

const run = (stdout: string, extra: Partial<{ timedOut: boolean; code: number; stderr: string }> = {}) => ({
  stdout,
  stderr: extra.stderr ?? "",
  code: extra.code ?? 0,
  signal: null,
  timedOut: extra.timedOut ?? false,
});

test("only the line with this run's nonce is the result; a forged line is ignored", () => {
  const nonce = "abcdef0123456789ab";
  const forged = '@gpuprep-frame 000000000000000000 memory {"status":"ok","peakAllocatedBytes":1}';
  const real = `@gpuprep-frame ${nonce} memory {"status":"error","errorKind":"factory","error":"boom","seconds":1,"python":{"executable":"p","version":"3.11"}}`;
  assert.equal(findFrame(forged, nonce), null);
  const out = parseMemoryOutput(run(`${forged}\n${real}\n`), nonce, "trace", 1000);
  assert.equal(out.kind, "failed");
  assert.equal(out.kind === "failed" && out.failure.error, "boom");
});

test("a trace that could not follow the model is a fallback with its exact parameters and the reason", () => {
  const frame = {
    status: "fallback",
    reason: "RuntimeError: no fake kernel",
    torch: { version: "2.11.0", cuda: "13.0" },
    parameterCount: 1000,
    trainableParameterCount: 1000,
    parameters: [
      {
        path: "layers.*.mlp.up_proj.weight",
        shape: [10, 10],
        role: "linear",
        dtype: "float32",
        trainable: true,
        count: 10,
      },
    ],
    modelClass: "FooForCausalLM",
    notes: [],
    seconds: 1,
    python: { executable: "p", version: "3.12" },
  };
  const nonce = "0123456789abcdef01";
  const framed = (doc: unknown) => `@gpuprep-frame ${nonce} memory ${JSON.stringify(doc)}\n`;
  const out = parseMemoryOutput(run(framed(frame)), nonce, "trace", 1000);
  assert.equal(out.kind, "fallback");
  assert.equal(out.kind === "fallback" && out.fallback.parameters[0]?.count, 10);
  // Without its parameters it is not a fallback this gpuprep can use.
  const partial = { ...frame, parameters: undefined };
  const bad = parseMemoryOutput(run(framed(partial)), nonce, "trace", 1000);
  assert.notEqual(bad.kind, "fallback");
});

test("no frame: a killed run says it was killed at its limit; a crash gives stderr's last line", () => {
  const killed = parseMemoryOutput(run("", { timedOut: true }), "n", "trial", 30_000);
  assert.deepEqual(killed, {
    kind: "no-result",
    reason: "did not finish within 30 s and was killed",
    timedOut: true,
  });
  const crashed = parseMemoryOutput(
    run("", { code: 134, stderr: "x\nterminate called\n" }),
    "n",
    "trial",
    1000,
  );
  assert.equal(
    crashed.kind === "no-result" && crashed.reason,
    "exited with code 134 without a result: terminate called",
  );
});

test("--batch takes N or A..B and nothing else", () => {
  assert.deepEqual(parseBatch("8"), { min: 8, max: 8, range: false });
  assert.deepEqual(parseBatch("2..512"), { min: 2, max: 512, range: true });
  assert.throws(() => parseBatch("8..2"), /neither a batch nor a range/);
  assert.throws(() => parseBatch("0"), /neither a batch nor a range/);
});

test("a model name resolves to its config.json in the local Hugging Face cache, never the network", () => {
  const home = mkdtempSync(join(tmpdir(), "gpuprep-hf-"));
  const rev = "0123456789abcdef0123456789abcdef01234567";
  const snap = join(home, "hub", "models--org--tiny", "snapshots", rev);
  mkdirSync(snap, { recursive: true });
  writeFileSync(join(snap, "config.json"), "{}");
  mkdirSync(join(home, "hub", "models--org--tiny", "refs"));
  writeFileSync(join(home, "hub", "models--org--tiny", "refs", "main"), rev);
  assert.deepEqual(hfCacheConfig("org/tiny", { HF_HOME: home }), {
    path: join(snap, "config.json"),
    root: join(home, "hub", "models--org--tiny"),
  });
  assert.equal(hfCacheConfig("org/absent", { HF_HOME: home }), null);
});

test("a hung payload is killed at its limit (a real interpreter, a factory that never returns)", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const fixtures = new URL("../../../test/memory/fixtures/", import.meta.url).pathname;
  const started = Date.now();
  const outcome = await runMemoryPayload(
    localTransport("/usr/bin/python3"),
    {
      mode: "trial",
      device: "cpu",
      source: { kind: "factory", spec: "models:hang_at_8", cwd: fixtures },
      batch: 8,
      task: "train",
      amp: null,
      dtype: "float32",
      optimizer: "sgd",
      gradCheckpointing: false,
      seqLen: null,
      imageSize: null,
      evalStep: false,
      lora: null,
    },
    12_000,
  );
  assert.equal(outcome.kind, "no-result");
  assert.equal(outcome.kind === "no-result" && outcome.timedOut, true);
  assert.ok(Date.now() - started < 30_000);
});
