/** `gpuprep scan` asks nvidia-smi for the local GPU; a stand-in that leaves a daemon on its stdout. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "../src/transports/liveness.js";

const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

test("scan: an nvidia-smi whose daemon holds stdout is read at its exit, and the daemon is killed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-scan-smi-"));
  const empty = join(dir, "empty");
  mkdirSync(empty);
  writeFileSync(
    join(dir, "nvidia-smi"),
    // The answer is the H100 capture's line (test/fixtures/nvidia-smi/h100/query.csv, nounits).
    `#!/bin/sh\nsleep 1000 & echo $! > ${dir}/daemon.pid\n` +
      `echo "0, NVIDIA H100 80GB HBM3, GPU-b0fafdcb-5d0e-6dd2-2d49-cbbccbf3c1e8, 9.0, 81559, Disabled, Enabled, 00000000:00:06.0, 580.159.04, 5, 16, 5, 16"\n`,
  );
  chmodSync(join(dir, "nvidia-smi"), 0o755);
  const started = Date.now();
  const result = spawnSync(process.execPath, [cli, "scan", empty, "--json"], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${dir}:${process.env["PATH"] ?? ""}` },
    timeout: 60_000,
  });
  const elapsed = Date.now() - started;
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { device: { label: string } | null };
  assert.equal(report.device?.label, "NVIDIA H100 80GB HBM3 (local)");
  // Waiting for the daemon's EOF ran into the 15 s limit before (and lost the answer).
  assert.ok(elapsed < 10_000, `took ${elapsed} ms`);
  const daemon = Number(readFileSync(join(dir, "daemon.pid"), "utf8"));
  assert.ok(await waitGone(daemon), `nvidia-smi's daemon ${daemon} survived`);
});
