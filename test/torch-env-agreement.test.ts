/**
 * Doctor's Facts and validate's payload, run by one real interpreter, report the torch environment
 * alike: both come from torch_env.py. Run with Debian's torch 1.13 (no SDPA at all) and a torch 2
 * (SDPA through torch.nn.attention). A flash_attn package on the interpreter's path (a real
 * package, imported for real) shows that the KB's import-checks list reaches both payloads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runProbe } from "../src/gather/probe.js";
import { localTransport } from "../src/transports/local.js";
import { runPayload } from "../src/validate/payload.js";
import { importChecks } from "../src/kb/index.js";
import { needs, PYTHON3_TORCH, TORCH2_PYTHON, TORCH2_PYTHON_PATH, type Part } from "./support/needs.js";
import { DEBIAN_PYTHON, tempDir } from "./support/venv.js";

/** `python` with a directory holding flash_attn 2.99.0 first on its path. */
function withFlashAttn(python: string): string {
  const dir = tempDir("gpuprep-agree-");
  mkdirSync(join(dir, "site", "flash_attn"), { recursive: true });
  writeFileSync(join(dir, "site", "flash_attn", "__init__.py"), '__version__ = "2.99.0"\n');
  const wrapper = join(dir, "python");
  writeFileSync(wrapper, `#!/bin/sh\nexec env PYTHONPATH=${join(dir, "site")} ${python} "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

const INTERPRETERS: Array<[string, Part, string, string]> = [
  ["Debian's torch 1.13", PYTHON3_TORCH, DEBIAN_PYTHON, "none"],
  ["torch 2", TORCH2_PYTHON, TORCH2_PYTHON_PATH, "nn.attention"],
];

for (const [label, part, interpreter, sdpaApi] of INTERPRETERS) {
  test(`${label}: doctor's torchLive and validate's env agree field for field`, async (t) => {
    if (needs(t, part)) return;
    const python = withFlashAttn(interpreter);
    const [facts, payload] = await Promise.all([
      runProbe(localTransport(python), { fast: false, timeoutMs: 180_000 }),
      runPayload(python, { only: ["checks"] }),
    ]);
    const live = facts.python.torchLive.result;
    const env = payload.env.result;
    assert.ok(live, `doctor's torch child: ${facts.python.torchLive.error ?? "no result"}`);
    assert.ok(env, `validate's env child: ${payload.env.run.error ?? "no result"}`);

    assert.equal(live.version, env.torch.version);
    assert.equal(live.cudaBuilt, env.torch.cuda ?? null);
    // One naming of the SDPA switches (SDPBackend's), the same values.
    assert.deepEqual(Object.keys(live.sdpa).sort(), ["cudnn", "efficient", "flash", "math"]);
    assert.deepEqual(live.sdpa, env["sdpaEnabled"]);
    assert.equal(live.sdpaApi, sdpaApi);
    assert.equal(env.sdpaApi, sdpaApi);
    assert.deepEqual(live.archList, env.archList);
    assert.equal(live.ncclVersion, env.ncclVersion ?? null);
    if (live.ncclVersion !== null) assert.match(live.ncclVersion, /^\d+\.\d+\.\d+/);
    assert.equal(live.cudnnVersion, env.cudnnVersion ?? null);
    assert.equal(live.deviceCount, env.deviceCount);
    assert.deepEqual(live.tf32, { matmul: env.tf32.matmul, cudnn: env.tf32.cudnn });
    assert.equal(live.float32MatmulPrecision, env.tf32.float32MatmulPrecision);
    assert.deepEqual(live.numpy, env.numpy);

    // The extension list: the KB's, in both.
    const modules = importChecks().map((row) => row.module);
    assert.deepEqual(payload.options["extensions"], modules);
    const doctorFlash = facts.python.extensions.find((e) => e.module === "flash_attn");
    const validateFlash = payload.extensions?.find((e) => e.module === "flash_attn");
    assert.equal(doctorFlash?.status, "ok");
    assert.equal(doctorFlash?.version, "2.99.0");
    assert.equal(validateFlash?.installed, true);
    assert.equal(validateFlash?.result?.version, "2.99.0");
  });
}
