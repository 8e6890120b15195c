/**
 * The GPU list scan asks nvidia-smi for, read in TypeScript: the same query and the same reading
 * as the probe's host facts, checked on the H100 capture (test/fixtures/nvidia-smi) replayed by a
 * PATH stand-in, and against the probe itself on the same stand-in.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { localTransport } from "../transports/local.js";
import { GPU_QUERY_FIELDS, gatherGpuList, parseGpuQuery } from "./gpus.js";
import { runProbe } from "./probe.js";
import { DEBIAN_PYTHON, tempDir } from "../../test/support/venv.js";
import { H100_CAPTURED_GPU as H100 } from "../../test/support/h100-capture.js";
import { withPath } from "../../test/support/with-path.js";

const CAPTURE = resolve("test/fixtures/nvidia-smi/h100");

/** A directory holding an `nvidia-smi` that runs `script`, and a PATH with only it and /usr/bin. */
function standIn(script: string): string {
  const dir = tempDir("gpuprep-gpus-");
  writeFileSync(join(dir, "nvidia-smi"), `#!/bin/sh\n${script}\n`);
  chmodSync(join(dir, "nvidia-smi"), 0o755);
  return dir;
}

test("the query is the probe's, field for field", () => {
  const probe = readFileSync(resolve("src/probe/probe.py"), "utf8");
  const match = /NVIDIA_QUERY = \(([^)]*)\)/.exec(probe);
  assert.ok(match, "NVIDIA_QUERY not found in probe.py");
  const fields = [...match[1]!.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join("");
  assert.deepEqual(fields.split(","), [...GPU_QUERY_FIELDS]);
});

test("the H100 capture: header line and units (a --format=csv capture) read as the probe reads them", () => {
  const parsed = parseGpuQuery(readFileSync(join(CAPTURE, "query.csv"), "utf8"));
  assert.equal(parsed.driverVersion, "580.159.04");
  assert.deepEqual(parsed.gpus, [H100]);
  // "[N/A]" and "[Not Supported]" are no value; a short line is noise.
  const odd = parseGpuQuery(
    "1, NVIDIA GB10, [N/A], 12.1, [N/A], [N/A], Disabled, 0000000F:01:00.0, 580.95.05, [Not Supported], [N/A], 1, 1\ngarbage\n",
  );
  assert.equal(odd.gpus.length, 1);
  assert.equal(odd.gpus[0]!.memoryTotalMiB, null);
  assert.equal(odd.gpus[0]!.uuid, null);
  assert.equal(odd.gpus[0]!.pcieLinkGenMax, null);
  assert.equal(odd.gpus[0]!.computeCapability, "12.1");
});

test("through the local transport: the capture, a failing driver, no nvidia-smi at all", async () => {
  const capture = standIn(
    `case "$1" in --query-gpu=*) exec cat ${CAPTURE}/query.csv;; *) exec cat ${CAPTURE}/nvidia-smi.txt;; esac`,
  );
  const transport = localTransport(DEBIAN_PYTHON);
  const ok = await withPath(`${capture}:/usr/bin:/bin`, () => gatherGpuList(transport));
  assert.deepEqual(ok, { status: "ok", error: null, driverVersion: "580.159.04", gpus: [H100] });

  // The probe on the same stand-in sees the same GPUs: the two readings agree.
  const probe = await withPath(`${capture}:/usr/bin:/bin`, () =>
    runProbe(transport, { fast: true, timeoutMs: 30_000 }),
  );
  assert.deepEqual(probe.host.nvidia.gpus, ok.gpus);
  assert.equal(probe.host.nvidia.driverVersion, ok.driverVersion);

  const failing = standIn(
    'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."; exit 9',
  );
  const failed = await withPath(`${failing}:/usr/bin:/bin`, () => gatherGpuList(transport));
  assert.equal(failed.status, "failed");
  assert.match(failed.error ?? "", /couldn't communicate with the NVIDIA driver/);
  assert.deepEqual(failed.gpus, []);

  const empty = tempDir("gpuprep-gpus-empty-");
  const none = await withPath(empty, () => gatherGpuList(transport));
  assert.deepEqual(none, {
    status: "not-found",
    error: "nvidia-smi is not on PATH",
    driverVersion: null,
    gpus: [],
  });
});
