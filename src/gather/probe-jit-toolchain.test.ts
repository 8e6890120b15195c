// The probe's JIT-toolchain facts (issue 25 item 4) for real: a triton package laid out as 3.6.0
// is (backends/nvidia/bin/ptxas and ptxas-blackwell, compiler.py picking the second for arch >=
// 100) whose binaries are this machine's CUDA 13.0 ptxas, a variable naming a missing file, and a
// ptxas that hangs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { localTransport } from "../transports/local.js";
import { runProbe } from "./probe.js";
import { DEBIAN_PYTHON, tempDir } from "../../test/support/venv.js";
import { needs, NVCC } from "../../test/support/needs.js";

/** site/triton as triton 3.6.0 lays it out; `binary` is what bin/ptxas and bin/ptxas-blackwell are. */
function tritonSite(binary: (path: string) => void): string {
  const site = tempDir("gpuprep-triton-site-");
  const nvidia = join(site, "triton", "backends", "nvidia");
  mkdirSync(join(nvidia, "bin"), { recursive: true });
  writeFileSync(join(site, "triton", "__init__.py"), "__version__ = '3.6.0'\n");
  // The two lines of triton 3.6.0's compiler.py that choose the binary (docs/kb-evidence/triton-ptxas.md).
  writeFileSync(
    join(nvidia, "compiler.py"),
    "def get_ptxas(arch: int) -> knobs.NvidiaTool:\n    return knobs.nvidia.ptxas_blackwell if arch >= 100 else knobs.nvidia.ptxas\n",
  );
  for (const name of ["ptxas", "ptxas-blackwell"]) binary(join(nvidia, "bin", name));
  return site;
}

async function probeWith(env: Record<string, string>) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await runProbe(localTransport(DEBIAN_PYTHON), { fast: true, timeoutMs: 60_000 });
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

test("triton's bundled ptxas and ptxas-blackwell, a variable naming no file: each asked for its version and --gpu-name list", async (t) => {
  if (needs(t, NVCC)) return;
  const ptxas = spawnSync("sh", ["-c", 'readlink -f "$(dirname "$(command -v nvcc)")/ptxas"'], {
    encoding: "utf8",
  }).stdout.trim();
  const site = tritonSite((path) => symlinkSync(ptxas, path));
  const out = await probeWith({ PYTHONPATH: site, TRITON_PTXAS_BLACKWELL_PATH: "/nonexistent/ptxas" });
  const jit = out.python.jitToolchain!;
  assert.deepEqual(
    { ...jit.triton, location: undefined },
    { location: undefined, version: "3.6.0", blackwellPtxas: true, thorPtxas: false },
  );
  const bundled = jit.ptxas.filter((p) => p.role === "bundled");
  assert.deepEqual(
    bundled.map((p) => p.name),
    ["ptxas", "ptxas-blackwell"],
  );
  for (const entry of bundled) {
    assert.equal(entry.version, "13.0", JSON.stringify(entry));
    for (const target of ["sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120a", "sm_121a"])
      assert.ok(entry.gpuNames?.includes(target), `${entry.name} lacks ${target}`);
    assert.ok(!entry.gpuNames?.some((n) => n.startsWith("compute_")), "only sm_ targets are kept");
  }
  const variable = jit.ptxas.find((p) => p.role === "env");
  assert.deepEqual(
    { ...variable },
    {
      name: "ptxas-blackwell",
      role: "env",
      variable: "TRITON_PTXAS_BLACKWELL_PATH",
      path: "/nonexistent/ptxas",
      exists: false,
      version: null,
      gpuNames: null,
      error: "no such file",
    },
  );
});

test("a bundled ptxas that hangs is cut at 5 s and reported, and the probe goes on", async () => {
  const site = tritonSite((path) => writeFileSync(path, "#!/bin/sh\nsleep 60\n", { mode: 0o755 }));
  const started = Date.now();
  const out = await probeWith({ PYTHONPATH: site });
  const elapsed = Date.now() - started;
  const bundled = out.python.jitToolchain!.ptxas.filter((p) => p.role === "bundled");
  assert.equal(bundled.length, 2);
  for (const entry of bundled) {
    assert.equal(entry.version, null);
    assert.match(entry.error ?? "", /did not answer within 5s/);
  }
  assert.ok(elapsed < 20_000, `the probe took ${elapsed} ms`);
});
