// The probe run for real: pyenv/Debian interpreters, a venv made here, extensions that crash or hang
// (tiny real modules named like them), and interpreters that crash, hang or print junk (wrapper scripts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ProbeOutputSchema } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { localTransport } from "../transports/local.js";
import { runProbe } from "./probe.js";
import { DEBIAN_PYTHON, makeVenv, tempDir } from "../../test/support/venv.js";
import { needs, PYTHON3_TORCH } from "../../test/support/needs.js";
import { H100_CAPTURED_GPU } from "../../test/support/h100-capture.js";

const full = { fast: false, timeoutMs: 60_000 };

/** What pip writes for a distribution: NAME-VERSION.dist-info with METADATA and INSTALLER. */
function writeDistInfo(dir: string, name: string, version: string): void {
  const info = join(dir, `${name}-${version}.dist-info`);
  mkdirSync(info, { recursive: true });
  writeFileSync(
    join(info, "METADATA"),
    `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n\nbody\n`,
  );
  writeFileSync(join(info, "INSTALLER"), "pip\n");
}

test("Debian python3 with python3-torch: torch CPU-only, live child ok, numpy 1.x round trip", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const out = await runProbe(localTransport(DEBIAN_PYTHON), full);
  assert.ok(ProbeOutputSchema.safeParse(out).success);
  const { python } = out;
  assert.equal(python.interpreter.kind, "system");
  assert.equal(python.interpreter.externallyManaged, true);
  assert.ok(python.torch, "torch read from files");
  assert.equal(python.torch.cudaVersion, null);
  assert.match(python.torch.version, /^1\.13\./);
  assert.deepEqual(python.torch.cudaLibraries, []);
  assert.ok(python.distributions.some((d) => d.normalizedName === "numpy"));
  assert.match(python.numpy?.version ?? "", /^1\./);
  assert.equal(python.torchLive.status, "ok");
  const live = python.torchLive.result;
  assert.ok(live);
  assert.equal(live.cudaAvailable, false);
  assert.equal(live.cudaBuilt, null);
  assert.equal(live.deviceCount, 0);
  assert.equal(live.kernel.ran, false);
  assert.equal(live.numpy.roundTrip, true);
  assert.equal(live.numpy.version, python.numpy?.version);
  assert.equal(out.host.nvidia.status === "ok", out.host.nvidia.gpus.length > 0);
  assert.ok(out.host.cpuCount && out.host.cpuCount > 0);
  assert.equal(python.probe.mode, "full");
});

test("--fast reads torch from files only and skips the live child", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const started = Date.now();
  const out = await runProbe(localTransport(DEBIAN_PYTHON), { fast: true, timeoutMs: 30_000 });
  assert.equal(out.python.probe.mode, "fast");
  assert.equal(out.python.torchLive.status, "skipped");
  assert.equal(out.python.torchLive.result, null);
  assert.match(out.python.torch?.version ?? "", /^1\.13\./);
  assert.ok(Date.now() - started < 5000, "fast mode spawns no torch import");
});

test("a venv without torch: kind venv, no torch, duplicates across sys.path dirs flagged", async () => {
  const [python, site] = makeVenv();
  const extra = tempDir();
  writeDistInfo(site, "demo_pkg", "1.0");
  writeDistInfo(extra, "demo-pkg", "2.0");
  writeFileSync(join(site, "extra.pth"), extra + "\n");
  const out = await runProbe(localTransport(python), full);
  const { interpreter } = out.python;
  assert.equal(interpreter.kind, "venv");
  assert.equal(interpreter.externallyManaged, false);
  assert.equal(out.python.torch, null);
  assert.equal(out.python.torchLive.status, "skipped");
  const duplicate = out.python.duplicates.find((d) => d.normalizedName === "demo-pkg");
  assert.ok(duplicate, "demo-pkg in two places is flagged");
  assert.deepEqual(
    duplicate.entries.map((e) => [e.version, e.location]),
    [
      ["1.0", site],
      ["2.0", extra],
    ],
  );
  assert.ok(duplicate.entries[0]!.pathIndex < duplicate.entries[1]!.pathIndex);
  assert.equal(out.python.distributions.find((d) => d.version === "1.0")?.installer, "pip");
});

test("extension imports: segfault, hang, undefined symbol and success each recorded as a fact", async () => {
  const [python, site] = makeVenv();
  const pkg = (name: string, code: string) => {
    mkdirSync(join(site, name));
    writeFileSync(join(site, name, "__init__.py"), code);
  };
  pkg("triton", "import ctypes\nctypes.string_at(0)\n");
  pkg("xformers", "import time\ntime.sleep(60)\n");
  pkg(
    "flash_attn",
    "raise ImportError('/x/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')\n",
  );
  pkg("bitsandbytes", "__version__ = '0.45.0'\n");
  writeDistInfo(site, "bitsandbytes", "0.45.0");
  const started = Date.now();
  const out = await runProbe(localTransport(python), { fast: false, timeoutMs: 4000 });
  const elapsed = Date.now() - started;
  const byName = new Map(out.python.extensions.map((e) => [e.module, e]));
  assert.deepEqual([...byName.keys()].sort(), ["bitsandbytes", "flash_attn", "triton", "xformers"]);
  assert.equal(byName.get("triton")?.status, "crash");
  assert.equal(byName.get("triton")?.signal, "SIGSEGV");
  assert.equal(byName.get("xformers")?.status, "timeout");
  assert.equal(byName.get("flash_attn")?.status, "error");
  assert.match(byName.get("flash_attn")?.error ?? "", /undefined symbol: _ZN3c104cuda9SetDeviceEi/);
  assert.equal(byName.get("bitsandbytes")?.status, "ok");
  assert.equal(byName.get("bitsandbytes")?.version, "0.45.0");
  assert.equal(byName.get("bitsandbytes")?.distribution, "bitsandbytes");
  // All children start together: the total is about one child timeout (3 s), not the sum.
  assert.ok(elapsed < 6000, `took ${elapsed} ms`);
  // The probe changes nothing: the imports wrote no bytecode caches.
  assert.ok(!existsSync(join(site, "bitsandbytes", "__pycache__")));
  const fast = await runProbe(localTransport(python), { fast: true, timeoutMs: 4000 });
  assert.ok(fast.python.extensions.every((e) => e.status === "skipped"));
});

function wrapper(body: string): string {
  const path = join(tempDir(), "python");
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

test("an interpreter that hangs, crashes, prints junk or is missing: one-line UserError", async () => {
  const cases: [string, RegExp][] = [
    [wrapper("exec sleep 30"), /did not finish the gpuprep probe within 2s/],
    [wrapper("kill -SEGV $$"), /crashed \(SIGSEGV\)/],
    [wrapper("echo hello"), /printed no gpuprep probe result \(last line: hello\)/],
    [
      wrapper("echo 'Traceback:' >&2; echo 'ImportError: no site' >&2; exit 1"),
      /exit 1\): ImportError: no site/,
    ],
    ["/nonexistent/bin/python", /cannot run \/nonexistent\/bin\/python: no such interpreter/],
  ];
  for (const [python, message] of cases) {
    await assert.rejects(
      runProbe(localTransport(python), { fast: true, timeoutMs: 2000 }),
      (error: unknown) => {
        assert.ok(error instanceof UserError);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /\n/);
        assert.ok(error.hint);
        return true;
      },
    );
  }
});

async function withNvidiaSmi<T>(script: string, fn: () => Promise<T>): Promise<T> {
  const dir = tempDir();
  writeFileSync(join(dir, "nvidia-smi"), `#!/bin/sh\n${script}\n`);
  chmodSync(join(dir, "nvidia-smi"), 0o755);
  const saved = process.env["PATH"];
  process.env["PATH"] = `${dir}:${saved ?? ""}`;
  try {
    return await fn();
  } finally {
    process.env["PATH"] = saved;
  }
}

test("nvidia-smi: the H100 capture replayed; a driver that fails", async () => {
  const capture = resolve("test/fixtures/nvidia-smi/h100");
  const h100 = await withNvidiaSmi(
    `case "$1" in --query-gpu=*) exec cat ${capture}/query.csv;; *) exec cat ${capture}/nvidia-smi.txt;; esac`,
    () => runProbe(localTransport(DEBIAN_PYTHON), { fast: true, timeoutMs: 30_000 }),
  );
  const nvidia = h100.host.nvidia;
  assert.equal(nvidia.status, "ok");
  assert.equal(nvidia.driverVersion, "580.159.04");
  assert.equal(nvidia.cudaVersion, "13.0");
  assert.deepEqual(nvidia.gpus, [H100_CAPTURED_GPU]);
  const failed = await withNvidiaSmi(
    'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."; exit 9',
    () => runProbe(localTransport(DEBIAN_PYTHON), { fast: true, timeoutMs: 30_000 }),
  );
  assert.equal(failed.host.nvidia.status, "failed");
  assert.match(failed.host.nvidia.error ?? "", /couldn't communicate with the NVIDIA driver/);
  assert.deepEqual(failed.host.nvidia.gpus, []);
});

test("environment: relevant variables kept, credentials dropped or masked; PIP_CONSTRAINT pins read", async () => {
  const constraints = join(tempDir(), "constraint.txt");
  writeFileSync(constraints, "# pins of the base image\ntorch==2.5.1\nnumpy==1.26.4  # ABI\n");
  const fromConf = join(tempDir(), "pins.txt");
  writeFileSync(fromConf, "pyarrow==17.0.0\n");
  const pipConf = join(tempDir(), "pip.conf");
  writeFileSync(pipConf, `[install]\nconstraint = ${fromConf}\n`);
  const vars: Record<string, string> = {
    PIP_CONSTRAINT: constraints,
    PIP_CONFIG_FILE: pipConf,
    PIP_INDEX_URL: "https://user:s3cret@pypi.example.com/simple",
    HF_TOKEN: "hf_secret",
    UV_NO_SYNC: "1",
    NVIDIA_PYTORCH_VERSION: "25.09",
  };
  const saved = { ...process.env };
  Object.assign(process.env, vars);
  let out;
  try {
    out = await runProbe(localTransport(DEBIAN_PYTHON), { fast: true, timeoutMs: 30_000 });
  } finally {
    for (const name of Object.keys(vars)) if (saved[name] === undefined) delete process.env[name];
    Object.assign(process.env, saved);
  }
  const env = out.python.env;
  assert.equal(env["UV_NO_SYNC"], "1");
  assert.equal(env["NVIDIA_PYTORCH_VERSION"], "25.09");
  assert.equal(env["PIP_INDEX_URL"], "https://***@pypi.example.com/simple");
  assert.equal(env["HF_TOKEN"], undefined);
  const file = out.python.constraintFiles.find((f) => f.path === constraints);
  assert.equal(file?.origin, "PIP_CONSTRAINT");
  assert.deepEqual(
    file?.pins.map((p) => [p.normalizedName, p.spec]),
    [
      ["torch", "==2.5.1"],
      ["numpy", "==1.26.4"],
    ],
  );
  const conf = out.python.constraintFiles.find((f) => f.path === fromConf);
  assert.equal(conf?.origin, `pip.conf ${pipConf} [install]`);
  assert.equal(conf?.pins[0]?.spec, "==17.0.0");
});
