/**
 * Docker's and ssh's own errors against what the interpreter printed. The stderr texts are real
 * captures: docker 28.2.2 with DOCKER_HOST=unix:///nonexistent.sock (`docker run --rm -i foo
 * python3 -` and `docker exec -i foo python3 -`), and `python3 -c 'import nosuch'`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { dockerOwnError, firstMeaningfulLine, sshOwnError } from "./tool-error.js";
import type { RunResult } from "./types.js";

const result = (code: number, stderr: string): RunResult => ({
  code,
  stderr,
  stdout: "",
  signal: null,
  timedOut: false,
});

const DOCKER_RUN_NO_DAEMON =
  "docker: Cannot connect to the Docker daemon at unix:///nonexistent.sock. Is the docker daemon running?\n\nRun 'docker run --help' for more information\n";
const DOCKER_EXEC_NO_DAEMON =
  "Cannot connect to the Docker daemon at unix:///nonexistent.sock. Is the docker daemon running?\n";
const PYTHON_TRACEBACK =
  "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'nosuch'\n";

test("the first meaningful line skips blank lines and docker's pointers to --help", () => {
  assert.equal(
    firstMeaningfulLine(
      "\n\nRun 'docker run --help' for more information\nSee 'docker run --help'.\nreal one\n",
    ),
    "real one",
  );
  assert.equal(firstMeaningfulLine("\n \n"), null);
});

test("docker run exit 125 and docker exec's daemon message are docker's own; a Python failure is not", () => {
  assert.match(
    dockerOwnError(result(125, DOCKER_RUN_NO_DAEMON), "run") ?? "",
    /^docker: Cannot connect to the Docker daemon/,
  );
  assert.match(dockerOwnError(result(1, DOCKER_EXEC_NO_DAEMON), "exec") ?? "", /^Cannot connect/);
  assert.equal(dockerOwnError(result(1, PYTHON_TRACEBACK), "exec"), null);
  assert.equal(dockerOwnError(result(1, PYTHON_TRACEBACK), "run"), null);
  assert.equal(dockerOwnError(result(0, DOCKER_EXEC_NO_DAEMON), "exec"), null);
});

test("ssh's own errors are its exit 255; the remote command's status is not", () => {
  const line = "ssh: Could not resolve hostname nosuch.invalid: Name or service not known";
  assert.equal(sshOwnError(result(255, `${line}\n`)), line);
  assert.equal(sshOwnError(result(1, PYTHON_TRACEBACK)), null);
});
