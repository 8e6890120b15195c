/**
 * validate.py against an nvidia-smi that misbehaves (a shell stand-in first on PATH): one that
 * answers but leaves a daemon holding its stdout, and one that ignores SIGTERM and never answers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPayload } from "../../src/validate/payload.js";
import { waitGone } from "../../src/transports/liveness.js";

async function withNvidiaSmi<T>(body: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-smi-"));
  writeFileSync(join(dir, "nvidia-smi"), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, "nvidia-smi"), 0o755);
  const saved = process.env["PATH"];
  process.env["PATH"] = `${dir}:${saved ?? ""}`;
  try {
    return await fn(dir);
  } finally {
    process.env["PATH"] = saved;
  }
}

test("an nvidia-smi that leaves a daemon on its stdout: validate reads its answer and goes on", async () => {
  await withNvidiaSmi(
    'sleep 1000 & echo $! > "$(dirname "$0")/daemon.pid"\necho "nvidia-smi stand-in: no such field"\nexit 6',
    async (dir) => {
      const started = Date.now();
      const payload = await runPayload("python3", { only: ["checks"] });
      const elapsed = Date.now() - started;
      assert.equal(payload.nvidiaSmi.status, "failed");
      assert.match(payload.nvidiaSmi.error ?? "", /stand-in: no such field/);
      // subprocess.run waited for the daemon's EOF (forever); now only a 2 s grace.
      assert.ok(elapsed < 20_000, `took ${elapsed} ms`);
      const daemon = Number(readFileSync(join(dir, "daemon.pid"), "utf8"));
      assert.ok(await waitGone(daemon), `nvidia-smi's daemon ${daemon} survived`);
    },
  );
});
