import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { UserError } from "../errors.js";
import { runProbe } from "../gather/probe.js";
import { containerCommand, containerTransport, imageCommand, imageTransport } from "./docker.js";
import { CommandNotFoundError, shellQuote } from "./spawn.js";
import { localTransport } from "./local.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sshCommand, sshTransport } from "./ssh.js";
import { DOCKER_ENGINE, needs, type Part } from "../../test/support/needs.js";
import { withPath } from "../../test/support/with-path.js";

test("command lines: docker exec / docker run feed the probe on stdin; ssh quotes for the remote shell", () => {
  assert.deepEqual(containerCommand("trainer", "python3", ["--fast"]), [
    "exec",
    "-i",
    "trainer",
    "python3",
    "-",
    "--fast",
  ]);
  assert.deepEqual(imageCommand("nvcr.io/nvidia/pytorch:25.10-py3", "python", [], true), [
    "run",
    "--rm",
    "-i",
    "--gpus",
    "all",
    "nvcr.io/nvidia/pytorch:25.10-py3",
    "python",
    "-",
  ]);
  assert.ok(!imageCommand("img", "python3", [], false).includes("--gpus"));
  assert.deepEqual(sshCommand("gpu-node-1", "/opt/my env/bin/python", ["--child-timeout", "45"]), [
    "-o",
    "BatchMode=yes",
    "--",
    "gpu-node-1",
    "'/opt/my env/bin/python' - --child-timeout 45",
  ]);
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  assert.equal(sshTransport("h").describe(), "python3 on h (ssh)");
});

test("docker or ssh missing: one-line UserError with a hint", async () => {
  for (const transport of [
    containerTransport("web"),
    imageTransport("img", "python3", false),
    sshTransport("h"),
  ]) {
    await withPath("/nonexistent", async () => {
      for (const run of [
        () => transport.runPython("print(1)", [], 5000),
        () => transport.runProgram("nvidia-smi", ["-L"], 5000),
      ])
        await assert.rejects(run(), (error: unknown) => {
          assert.ok(error instanceof UserError);
          assert.match(error.message, /(docker|ssh) is not installed or not on PATH/);
          return true;
        });
    });
  }
});

test("runProgram: the program and its arguments as docker exec / docker run / ssh pass them, stdin empty", async () => {
  // Stand-ins for docker and ssh that print the arguments they were given, one a line.
  const bin = mkdtempSync(join(tmpdir(), "gpuprep-transport-argv-"));
  for (const tool of ["docker", "ssh"])
    writeFileSync(join(bin, tool), '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\ncat\n', { mode: 0o755 });
  const argv = (result: { stdout: string }) => result.stdout.trimEnd().split("\n");
  await withPath(`${bin}:/usr/bin:/bin`, async () => {
    assert.deepEqual(argv(await containerTransport("web").runProgram("nvidia-smi", ["-L"], 5000)), [
      "exec",
      "web",
      "nvidia-smi",
      "-L",
    ]);
    assert.deepEqual(
      argv(await imageTransport("img", "python3", false).runProgram("nvidia-smi", ["-L"], 5000)),
      ["run", "--rm", "img", "nvidia-smi", "-L"],
    );
    assert.deepEqual(
      argv(await sshTransport("h").runProgram("/opt/my env/python", ["-c", "print(1)"], 5000)),
      ["-o", "BatchMode=yes", "--", "h", "'/opt/my env/python' -c 'print(1)'"],
    );
  });
  // Locally a missing program is the caller's to word, not a UserError.
  await assert.rejects(
    localTransport("python3").runProgram("/nonexistent/nvidia-smi", [], 5000),
    CommandNotFoundError,
  );
});

// Needs a running Docker engine and a local image with python3 (no pulls: tests run offline).
const TEST_IMAGE = process.env["GPUPREP_TEST_IMAGE"] ?? "python:3.12-slim";
/** No registry is reachable here, so the image is one that was built or loaded on this machine. */
const TEST_IMAGE_PART: Part = {
  what: `the image ${TEST_IMAGE}`,
  absent: "is not present locally",
  install: "build or load a local image with python3 and set GPUPREP_TEST_IMAGE to it",
  onCi: false,
  present: () => spawnSync("docker", ["image", "inspect", TEST_IMAGE], { stdio: "ignore" }).status === 0,
};

test("docker run and docker exec run the probe inside a real container", async (t) => {
  if (needs(t, DOCKER_ENGINE, TEST_IMAGE_PART)) return;
  const fromImage = await runProbe(imageTransport(TEST_IMAGE, "python3", false), {
    fast: true,
    timeoutMs: 60000,
  });
  assert.equal(fromImage.host.container.inContainer, true);
  const name = `gpuprep-test-${process.pid}`;
  assert.equal(spawnSync("docker", ["run", "-d", "--name", name, TEST_IMAGE, "sleep", "120"]).status, 0);
  try {
    const inside = await runProbe(containerTransport(name), { fast: true, timeoutMs: 60000 });
    assert.equal(inside.host.container.runtime, "docker");
    await assert.rejects(
      runProbe(containerTransport(name, "python9"), { fast: true, timeoutMs: 60000 }),
      UserError,
    );
  } finally {
    spawnSync("docker", ["rm", "-f", name], { stdio: "ignore" });
  }
});
